-- Shared by every script: store/scripts.py puts it before each. It names the
-- keys a script is told of by name (a room, a member) rather than given in
-- KEYS, as store/keys.py names them, from the start of the shard's keys
-- ("{tag}:"), so every key shares the shard's hash tag (its cluster slot);
-- and it keeps the places members hold in rooms (docs/data-model.md).

--- clock
-- Redis' time: as a number, and as "seconds.micros" (a score's exact form).
local function clock()
  local t = redis.call('TIME')
  local text = t[1] .. '.' .. string.format('%06d', tonumber(t[2]))
  return tonumber(text), text
end

--- room_set
local function room_set(start, room, kind)
  return start .. 'room:' .. room .. ':' .. kind
end

--- location_key
local function location_key(start, pk)
  return start .. 'where:' .. pk
end

--- changes_channel
-- The channel a shard's changes are announced on (keys.Shard.changes).
local function changes_channel(start)
  return start .. 'changes'
end

--- announced
-- What this script announced already: each room (or '*') once.
local announced = {}

--- announce
-- Tell the web processes listening on ``channel`` that ``what`` (a room's
-- name, or '*' for the site's lists) changed: someone joined or left. Never
-- who: each stream renders again, through its viewer's gate. Sharded
-- pub/sub (SPUBLISH, Redis 7), which a cluster keeps on the nodes of the
-- channel's slot, the shard's own; a server without it (Redis 6.2) announces
-- nothing, and its pages poll. A message is one name, or several separated
-- by spaces (room names have none).
local function announce(channel, what)
  if announced[what] then
    return
  end
  announced[what] = true
  pcall(redis.call, 'SPUBLISH', channel, what)
end

--- read_held
-- The places a member holds (keys.Shard.places): one string, the member's
-- kind on its first line, then a line a place,
-- "<d:device or t:tab> <present until, whole seconds> <room> [<room>...]".
-- Returns the kind (nil if the member holds none) and the places, each
-- {place, until as text, rooms as text}.
local function read_held(text)
  if not text then
    return nil, {}
  end
  local held, first = {}, string.find(text, '\n', 1, true)
  if not first then
    return text, held
  end
  local at = first + 1
  while at <= #text do
    local stop = (string.find(text, '\n', at, true) or #text + 1)
    local gap = string.find(text, ' ', at, true)
    local gap2 = string.find(text, ' ', gap + 1, true)
    held[#held + 1] = {
      string.sub(text, at, gap - 1),
      string.sub(text, gap + 1, gap2 - 1),
      string.sub(text, gap2 + 1, stop - 1),
    }
    at = stop + 1
  end
  return string.sub(text, 1, first - 1), held
end

--- is_past
-- Whether ``till`` (whole seconds, as text) is no later than ``now`` (the
-- same): compared as text, which equal lengths allow.
local function is_past(till, now)
  if #till ~= #now then
    return #till < #now
  end
  return till <= now
end

--- holds_room
-- Whether a place's rooms (as read_held gives them) include ``room``.
local function holds_room(rooms, room)
  local at = 1
  while true do
    local found = string.find(rooms, room, at, true)
    if not found then
      return false
    end
    local after = found + #room
    if (found == 1 or string.byte(rooms, found - 1) == 32)
        and (after > #rooms or string.byte(rooms, after) == 32) then
      return true
    end
    at = found + 1
  end
end

--- write_held
-- Keep ``held`` (as read_held gives it) as the member's places, for
-- ``seconds`` at most, or forget them when none is left.
local function write_held(key, kind, held, seconds)
  if #held == 0 then
    redis.call('DEL', key)
    return
  end
  local lines = {kind}
  for i, place in ipairs(held) do
    lines[i + 1] = place[1] .. ' ' .. place[2] .. ' ' .. place[3]
  end
  redis.call('SET', key, table.concat(lines, '\n'), 'EX', seconds)
end

--- leave_room
-- ``member`` leaves ``room`` at once: out of its set of their kind (their
-- places say which: move_kind keeps it). Whether they were there; the
-- caller announces.
local function leave_room(start, kind, member, room)
  return redis.call('ZREM', room_set(start, room, kind), member) == 1
end

--- latest_in
-- Until when the latest of ``held``'s places in ``room`` lasts; nil when
-- none is there.
local function latest_in(held, room)
  local till = nil
  for _, place in ipairs(held) do
    if (till == nil or not is_past(place[2], till)) and holds_room(place[3], room) then
      till = place[2]
    end
  end
  return till
end

--- settle
-- ``member``'s presence in ``room``, which one of their places left, is
-- what their other places there say (``held``): until the latest of them,
-- or gone when none is left. Whether they left the room.
local function settle(start, kind, member, held, room)
  local till = latest_in(held, room)
  if till == nil then
    return leave_room(start, kind, member, room)
  end
  redis.call('ZADD', room_set(start, room, kind), 'XX', till, member)
  return false
end

--- leave_everywhere
-- ``member`` leaves every room they hold a place in, at once (announced),
-- and holds none.
local function leave_everywhere(start, member, key)
  local kind, held = read_held(redis.call('GET', key))
  local seen = {}
  for _, place in ipairs(held) do
    for room in string.gmatch(place[3], '%S+') do
      if not seen[room] then
        seen[room] = true
        if leave_room(start, kind, member, room) then
          announce(changes_channel(start), room)
        end
      end
    end
  end
  redis.call('DEL', key)
end

--- move_kind
-- A user moved between the visible and hidden sets (``to``): in each room
-- they hold a place in too, keeping until when they are there (the set
-- they join is kept ``seconds``); the rooms moved.
local function move_kind(start, member, key, to, seconds)
  local text = redis.call('GET', key)
  local kind, held = read_held(text)
  if kind == nil or kind == to then
    return {}
  end
  local moved, seen = {}, {}
  for _, place in ipairs(held) do
    for room in string.gmatch(place[3], '%S+') do
      if not seen[room] then
        seen[room] = true
        local from = room_set(start, room, kind)
        local till = redis.call('ZSCORE', from, member)
        if till then
          local target = room_set(start, room, to)
          redis.call('ZREM', from, member)
          redis.call('ZADD', target, till, member)
          redis.call('EXPIRE', target, seconds)
          moved[#moved + 1] = room
          announce(changes_channel(start), room)
        end
      end
    end
  end
  redis.call('SET', key, to .. string.sub(text, #kind + 1), 'KEEPTTL')
  return moved
end
