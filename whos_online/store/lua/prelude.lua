-- Shared by every script: store/scripts.py puts it before each. It names the
-- keys a script is told of by name (a room, a member) rather than given in
-- KEYS, as store/keys.py names them, from the start of the shard's keys
-- ("{tag}:"), so every key shares the shard's hash tag (its cluster slot);
-- and it keeps the places members hold in rooms (docs/data-model.md).

-- Redis' time: as a number, and as "seconds.micros" (a score's exact form).
local function clock()
  local t = redis.call('TIME')
  local text = t[1] .. '.' .. string.format('%06d', tonumber(t[2]))
  return tonumber(text), text
end

local function room_set(start, room, kind)
  return start .. 'room:' .. room .. ':' .. kind
end

local function location_key(start, pk)
  return start .. 'where:' .. pk
end

local function places_key(start, kind, member)
  if kind == 'guests' then
    return start .. 'places:g:' .. member
  end
  return start .. 'places:u:' .. member
end

-- The rooms index, sizes and members count of the budget ``room`` is kept
-- within: the admin's rooms have their own (keys.budget_of).
local function budget_of(start, room)
  local budget = ''
  if string.find(room, '^admin[:%-]') then
    budget = 'admin-'
  end
  return start .. budget .. 'rooms', start .. budget .. 'room-sizes',
    start .. budget .. 'room-members'
end

-- The sets of a room a member of ``kind`` may be in: a user's visible and
-- hidden sets (they move between them), or the guests set.
local function sets_of(start, room, kind)
  if kind == 'guests' then
    return {room_set(start, room, 'guests')}
  end
  return {room_set(start, room, 'users'), room_set(start, room, 'hidden')}
end

-- The channel a shard's changes are announced on (keys.Shard.changes).
local function changes_channel(start)
  return start .. 'changes'
end

-- What this script announced already: each room (or '*') once.
local announced = {}

-- Tell the web processes listening on ``channel`` that ``what`` (a room's
-- name, or '*' for the site's lists) changed: someone joined or left. Never
-- who: each stream renders again, through its viewer's gate. Sharded
-- pub/sub (SPUBLISH, Redis 7), which a cluster keeps on the nodes of the
-- channel's slot, the shard's own; a server without it (Redis 6.2) announces
-- nothing, and its pages poll.
local function announce(channel, what)
  if not announced[what] then
    announced[what] = true
    pcall(redis.call, 'SPUBLISH', channel, what)
  end
end

-- Keep ``key`` for at least ``seconds`` more.
local function keep_for(key, seconds)
  if redis.call('TTL', key) < seconds then
    redis.call('EXPIRE', key, seconds)
  end
end

-- A place: "<room> <d:device or t:tab>".
local function place_of(entry)
  return string.match(entry, '^(%S+) (%S+)$')
end

-- ``left`` members left ``room``: its budget no longer holds their places.
local function freed(start, room, left)
  if left > 0 then
    local _, sizes, members = budget_of(start, room)
    redis.call('ZINCRBY', sizes, -left, room)
    redis.call('DECRBY', members, left)
  end
end

-- Members whose presence in ``room`` ran out make way; how many.
local function clear_stale(start, room, now)
  local left = 0
  for _, kind in ipairs({'users', 'hidden', 'guests', 'bots'}) do
    left = left + redis.call('ZREMRANGEBYSCORE', room_set(start, room, kind), '-inf', now)
  end
  freed(start, room, left)
  if left > 0 then
    announce(changes_channel(start), room)
  end
  return left
end

-- Rooms whose presence ran out leave their budget's index (a hundred at a
-- time), and their sets' places are free.
local function forget_idle_rooms(index, sizes, members, now)
  local gone = redis.call('ZRANGEBYSCORE', index, '-inf', now, 'LIMIT', 0, 100)
  if #gone > 0 then
    local held = 0
    for _, name in ipairs(gone) do
      held = held + tonumber(redis.call('ZSCORE', sizes, name) or '0')
    end
    redis.call('DECRBY', members, held)
    redis.call('ZREM', index, unpack(gone))
    redis.call('ZREM', sizes, unpack(gone))
  end
end

-- Puts ``member`` (of ``kind``) in ``room`` until ``till``; false when
-- refused. A new room is refused while ``most_rooms`` others of its budget
-- are in use, and a member new to a room while the budget's rooms hold
-- ``most_members``, once members whose presence ran out made way (from this
-- room, then from the rooms whose presence runs out first): newcomers wait,
-- and nobody in a room is ever pushed out. Guests get half of each bound,
-- so strangers never fill what users need.
local function join(start, kind, member, room, till, now, most_rooms, most_members)
  local index, sizes, members = budget_of(start, room)
  if kind == 'guests' then
    most_rooms, most_members = math.floor(most_rooms / 2), math.floor(most_members / 2)
  end
  forget_idle_rooms(index, sizes, members, now)
  if not redis.call('ZSCORE', index, room) then
    if redis.call('ZCARD', index) >= most_rooms then
      return false
    end
    -- Whatever an idle room's sets still hold was freed with it.
    for _, set in ipairs(sets_of(start, room, 'users')) do
      redis.call('ZREMRANGEBYSCORE', set, '-inf', now)
    end
    redis.call('ZREMRANGEBYSCORE', room_set(start, room, 'guests'), '-inf', now)
  end
  local target, other = room_set(start, room, kind), nil
  if kind == 'users' then
    other = room_set(start, room, 'hidden')
  elseif kind == 'hidden' then
    other = room_set(start, room, 'users')
  end
  local added = 0
  if not redis.call('ZSCORE', target, member) then
    clear_stale(start, room, now)
    local held = tonumber(redis.call('GET', members) or '0')
    if held >= most_members then
      for _, name in ipairs(redis.call('ZRANGE', index, 0, 9)) do
        if name ~= room then
          held = held - clear_stale(start, name, now)
        end
      end
      if held >= most_members then
        return false
      end
    end
    added = 1
  end
  local moved = other and redis.call('ZREM', other, member) == 1
  if moved then
    added = added - 1
  end
  -- A renewal (already in ``target``) announces nothing.
  if added == 1 or moved then
    announce(changes_channel(start), room)
  end
  local seconds = math.ceil(till - now) + 1
  redis.call('ZADD', target, 'GT', till, member)
  redis.call('ZADD', index, 'GT', till, room)
  redis.call('ZINCRBY', sizes, added, room)
  redis.call('INCRBY', members, added)
  for _, key in ipairs({target, index, sizes, members}) do
    keep_for(key, seconds)
  end
  return true
end

-- ``member`` leaves ``room`` at once: their place in its budget is free,
-- and the room's streams are told.
local function leave_room(start, kind, member, room)
  local left = 0
  for _, set in ipairs(sets_of(start, room, kind)) do
    left = left + redis.call('ZREM', set, member)
  end
  freed(start, room, left)
  if left > 0 then
    announce(changes_channel(start), room)
  end
end

-- ``member``'s presence in ``room`` is what their places there say: until
-- the latest of them, or gone when none is left.
local function settle(start, kind, member, places, room, now)
  local till = nil
  local held = redis.call('ZRANGEBYSCORE', places, '(' .. now, '+inf', 'WITHSCORES')
  for i = 1, #held, 2 do
    local name = place_of(held[i])
    local score = tonumber(held[i + 1])
    if name == room and (till == nil or score > till) then
      till = score
    end
  end
  if till == nil then
    leave_room(start, kind, member, room)
    return
  end
  for _, set in ipairs(sets_of(start, room, kind)) do
    redis.call('ZADD', set, 'XX', till, member)
  end
end

-- ``member`` leaves every room they hold a place in, at once.
local function leave_everywhere(start, kind, member, places)
  local rooms = {}
  for _, entry in ipairs(redis.call('ZRANGE', places, 0, -1)) do
    rooms[place_of(entry)] = true
  end
  for room in pairs(rooms) do
    leave_room(start, kind, member, room)
  end
  redis.call('DEL', places)
end

-- The rooms ``member`` holds a place in, each once.
local function rooms_held(places)
  local seen, rooms = {}, {}
  for _, entry in ipairs(redis.call('ZRANGE', places, 0, -1)) do
    local room = place_of(entry)
    if not seen[room] then
      seen[room] = true
      rooms[#rooms + 1] = room
    end
  end
  return rooms
end
