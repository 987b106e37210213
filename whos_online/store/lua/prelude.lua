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
-- The places a member's tabs hold (keys.Shard.tabs): one string, the
-- member's kind on its first line, then a line a tab,
-- "t:<tab> <present until, whole seconds> <room> [<room>...]".
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

--- read_device
-- The place a device holds (keys.Shard.device_place), the rooms of the page
-- it opened last: "<kind> <present until, whole seconds> <room> [<room>...]".
-- Returns its kind, until when and rooms as text; nil when it holds none.
local function read_device(text)
  if not text then
    return nil
  end
  local gap = string.find(text, ' ', 1, true)
  local gap2 = string.find(text, ' ', gap + 1, true)
  return string.sub(text, 1, gap - 1), string.sub(text, gap + 1, gap2 - 1),
    string.sub(text, gap2 + 1)
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
-- Keep ``held`` (as read_held gives it) as the member's tabs, for
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

--- entry
-- A place's entry in a room's sets (entry -> present until): the place,
-- "d:<device>" or "t:<tab>" (no space in it), and the member. A member is
-- in a room while any entry of theirs there lasts; reads count them once.
local function entry(place, member)
  return place .. ' ' .. member
end

--- is_user letter tabs_key device_key devices_of
-- The keys of a member's places, as keys.Shard names them: their tabs'
-- (one string), and each device's. A user's (kinds users and hidden) are
-- kept apart from a guest's and a bot's.
local function is_user(kind)
  return kind == 'users' or kind == 'hidden'
end

local function letter(kind)
  return is_user(kind) and 'u' or string.sub(kind, 1, 1)
end

local function tabs_key(start, kind, member)
  return start .. 'tabs:' .. letter(kind) .. ':' .. member
end

local function device_key(start, kind, device, member)
  return start .. 'dev:' .. letter(kind) .. ':' .. device .. ':' .. member
end

-- The devices a member may hold a place from: a user's devices set (at
-- most five, kept by record.lua), a guest's one (their address).
local function devices_of(start, kind, member)
  if is_user(kind) then
    return redis.call('ZRANGE', start .. 'devices:' .. member, 0, -1)
  end
  return {''}
end

--- places_of
-- Every place ``member`` holds, each {place, until, rooms as text, kind,
-- key}: their tabs' and their devices' (``device``'s too, if given, though
-- their devices set no longer names it).
local function places_of(start, kind, member, device)
  local found = {}
  local tabs = tabs_key(start, kind, member)
  local tab_kind, held = read_held(redis.call('GET', tabs))
  for _, place in ipairs(held) do
    found[#found + 1] = {place[1], place[2], place[3], tab_kind, tabs}
  end
  local devices = devices_of(start, kind, member)
  if device then
    devices[#devices + 1] = device
  end
  local seen = {}
  for _, name in ipairs(devices) do
    if not seen[name] then
      seen[name] = true
      local key = device_key(start, kind, name, member)
      local its_kind, till, rooms = read_device(redis.call('GET', key))
      if its_kind then
        found[#found + 1] = {'d:' .. name, till, rooms, its_kind, key}
      end
    end
  end
  return found
end

--- is_in
-- Whether any of ``places`` (as places_of gives them) holds ``room`` at
-- ``now``.
local function is_in(places, room, now)
  for _, place in ipairs(places) do
    if not is_past(place[2], now) and holds_room(place[3], room) then
      return true
    end
  end
  return false
end

--- leave_everywhere
-- ``member`` (of ``kind``) leaves every room they hold a place in, at once
-- (announced), and holds none.
local function leave_everywhere(start, kind, member, device)
  for _, place in ipairs(places_of(start, kind, member, device)) do
    local placed = entry(place[1], member)
    for room in string.gmatch(place[3], '%S+') do
      if redis.call('ZREM', room_set(start, room, place[4]), placed) == 1 then
        announce(changes_channel(start), room)
      end
    end
    redis.call('DEL', place[5])
  end
end

--- move_kind
-- A user moved between the visible and hidden sets (``to``): each place of
-- theirs moves its entries too, keeping until when they are there (the set
-- they join is kept ``seconds``); the rooms moved.
local function move_kind(start, member, to, seconds, device)
  local moved, seen, keys = {}, {}, {}
  for _, place in ipairs(places_of(start, to, member, device)) do
    local from = place[4]
    if from ~= to then
      keys[place[5]] = from
      local placed = entry(place[1], member)
      for room in string.gmatch(place[3], '%S+') do
        local source = room_set(start, room, from)
        local till = redis.call('ZSCORE', source, placed)
        if till then
          local target = room_set(start, room, to)
          redis.call('ZREM', source, placed)
          redis.call('ZADD', target, till, placed)
          redis.call('EXPIRE', target, seconds)
          if not seen[room] then
            seen[room] = true
            moved[#moved + 1] = room
            announce(changes_channel(start), room)
          end
        end
      end
    end
  end
  for key, from in pairs(keys) do
    local text = redis.call('GET', key)
    redis.call('SET', key, to .. string.sub(text, #from + 1), 'KEEPTTL')
  end
  return moved
end

--- present
-- Who a room's set (entry -> present until) holds from ``since`` on (a
-- score, or '(' and one): each member once, at their latest place, newest
-- first. Returns up to ``limit`` of them as a flat member/until list, how
-- many there are, and the set of them.
local function present(set, since, limit)
  local found = redis.call('ZREVRANGEBYSCORE', set, '+inf', since, 'WITHSCORES')
  local listed, seen, count = {}, {}, 0
  for i = 1, #found, 2 do
    local placed = found[i]
    -- A member's own name where an older version kept members, not places.
    local member = string.sub(placed, (string.find(placed, ' ', 1, true) or 0) + 1)
    if not seen[member] then
      seen[member] = true
      count = count + 1
      if count <= limit then
        listed[#listed + 1] = member
        listed[#listed + 1] = found[i + 1]
      end
    end
  end
  return listed, count, seen
end

--- may_hold
-- Whether ``device`` may hold a place: a user's must be one of their
-- devices (at most five, record.lua), or their one without a session ('').
local function may_hold(start, kind, member, device)
  return not is_user(kind) or device == ''
    or redis.call('ZSCORE', start .. 'devices:' .. member, device) ~= false
end
