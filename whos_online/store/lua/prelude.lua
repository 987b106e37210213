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

--- places_key
local function places_key(start, kind, member)
  if kind == 'guests' then
    return start .. 'places:g:' .. member
  end
  return start .. 'places:u:' .. member
end

--- budget_of
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

--- sets_of
-- The sets of a room a member of ``kind`` may be in, the set of their kind
-- first: a user's visible and hidden sets (they move between them), or the
-- guests set.
local function sets_of(start, room, kind)
  if kind == 'guests' then
    return {room_set(start, room, 'guests')}
  elseif kind == 'hidden' then
    return {room_set(start, room, 'hidden'), room_set(start, room, 'users')}
  end
  return {room_set(start, room, 'users'), room_set(start, room, 'hidden')}
end

--- changes_channel
-- The channel a shard's changes are announced on (keys.Shard.changes).
local function changes_channel(start)
  return start .. 'changes'
end

--- announced announcements_held members_counted hold_changes
-- What this script announced already: each room (or '*') once.
local announced = {}
-- A script that moves a member between rooms (places.lua) holds its
-- announcements, channel -> names, and its changes to the budgets' members
-- counts, key -> change, and writes each once at the end (hold_changes);
-- every other script writes them at once.
local announcements_held, members_counted = nil, nil

local function hold_changes()
  announcements_held, members_counted = {}, {}
end

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
  if announcements_held then
    local names = announcements_held[channel] or {}
    names[#names + 1] = what
    announcements_held[channel] = names
  else
    pcall(redis.call, 'SPUBLISH', channel, what)
  end
end

--- announce_held
-- Send what announce held, one message a channel.
local function announce_held()
  for channel, names in pairs(announcements_held) do
    pcall(redis.call, 'SPUBLISH', channel, table.concat(names, ' '))
  end
end

--- place_of
-- A place: "<room> <d:device or t:tab>".
local function place_of(entry)
  return string.match(entry, '^(%S+) (%S+)$')
end

--- count_members
-- The budget counted by ``members`` holds ``change`` more members.
local function count_members(members, change)
  if members_counted then
    members_counted[members] = (members_counted[members] or 0) + change
  elseif change ~= 0 then
    redis.call('INCRBY', members, change)
  end
end

--- freed
-- ``left`` members left ``room``: its budget no longer holds their places.
local function freed(start, room, left)
  if left > 0 then
    local _, sizes, members = budget_of(start, room)
    redis.call('ZINCRBY', sizes, -left, room)
    count_members(members, -left)
  end
end

--- leave_room
-- ``member`` leaves ``room`` at once: their place in its budget is free,
-- and the room's streams are told.
local function leave_room(start, kind, member, room)
  local left = 0
  -- A user is in at most one of a room's users and hidden sets.
  for _, set in ipairs(sets_of(start, room, kind)) do
    left = redis.call('ZREM', set, member)
    if left == 1 then
      break
    end
  end
  freed(start, room, left)
  if left > 0 then
    announce(changes_channel(start), room)
  end
end

--- live_places
-- The member's places that last beyond ``now``, read once: place -> until.
local function live_places(places, now)
  local live = {}
  local held = redis.call('ZRANGE', places, '(' .. now, '+inf', 'BYSCORE', 'WITHSCORES')
  for i = 1, #held, 2 do
    live[held[i]] = tonumber(held[i + 1])
  end
  return live
end

--- settle
-- ``member``'s presence in ``room`` is what their ``live`` places there say
-- (see live_places): until the latest of them, or gone when none is left.
local function settle(start, kind, member, live, room)
  local till = nil
  for entry, score in pairs(live) do
    if place_of(entry) == room and (till == nil or score > till) then
      till = score
    end
  end
  if till == nil then
    leave_room(start, kind, member, room)
    return true
  end
  for _, set in ipairs(sets_of(start, room, kind)) do
    redis.call('ZADD', set, 'XX', till, member)
  end
  return false
end

--- leave_everywhere
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

--- rooms_held
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
