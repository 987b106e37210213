-- A user logged out on one device: take them off the lists, and out of every
-- room they are in, unless another device of theirs was seen within the
-- guard period; the device that logged out leaves its rooms either way.
--
-- KEYS[1]  the users set
-- KEYS[2]  the hidden set
-- KEYS[3]  the user's devices set (session hash -> last seen)
-- KEYS[4]  the user's places (see places.lua)
-- KEYS[5]  the user's location (see Writes.set_location)
-- KEYS[6]  the start of the shard's keys, "{tag}:": the rooms' keys are
--          named from it (prelude.lua), keys of the same hash tag
--
-- ARGV[1]  the user's primary key
-- ARGV[2]  the device that logged out, or ''
-- ARGV[3]  the guard period, in seconds
-- ARGV[4]  how long the user's places are kept after their last write
--
-- A user who leaves the lists or a room is announced (prelude.lua's
-- announce).
--
-- Returns false if the user stays online elsewhere, else 1 if they were
-- hidden, 0 if not. The places they held in rooms are free at once.

local users, hidden, devices, key = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local location, start = KEYS[5], KEYS[6]
local member, device, guard_seconds = ARGV[1], ARGV[2], tonumber(ARGV[3])
local longest = ARGV[4]

local now = redis.call('TIME')[1]
if device ~= '' then
  redis.call('ZREM', devices, device)
  local kind, held = read_held(redis.call('GET', key))
  local kept, rooms, left = {}, {}, false
  for _, place in ipairs(held) do
    if place[1] == 'd:' .. device then
      left = true
      for room in string.gmatch(place[3], '%S+') do
        rooms[room] = true
      end
    elseif not is_past(place[2], now) then
      kept[#kept + 1] = place
    end
  end
  if left then
    for room in pairs(rooms) do
      if settle(start, kind, member, kept, room) then
        announce(changes_channel(start), room)
      end
    end
    write_held(key, kind, kept, longest)
  end
end
if redis.call('ZCOUNT', devices, tonumber(now) - guard_seconds, '+inf') > 0 then
  return false
end
local was_visible = redis.call('ZREM', users, member)
local was_hidden = redis.call('ZREM', hidden, member)
if was_visible + was_hidden > 0 then
  announce(changes_channel(start), '*')
end
leave_everywhere(start, member, key)
redis.call('DEL', devices, location)
return was_hidden
