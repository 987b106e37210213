-- A user logged out on one device: take them off the lists, and out of every
-- room they are in, unless another device of theirs was seen within the
-- guard period; the device that logged out leaves its rooms either way.
--
-- KEYS[1]  the users set
-- KEYS[2]  the hidden set
-- KEYS[3]  the user's devices set (session hash -> last seen)
-- KEYS[4]  the start of the shard's keys, "{tag}:": the rooms' keys and
--          the user's places are named from it (prelude.lua), keys of the
--          same hash tag
-- KEYS[5]  the user's location (see Writes.set_location)
--
-- ARGV[1]  the user's primary key
-- ARGV[2]  the device that logged out, or ''
-- ARGV[3]  the guard period, in seconds
--
-- A user who leaves the lists or a room is announced (prelude.lua's
-- announce).
--
-- Returns false if the user stays online elsewhere, else 1 if they were
-- hidden, 0 if not. The places they held in rooms are free at once.

local users, hidden, devices, start = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local location = KEYS[5]
local member, device, guard_seconds = ARGV[1], ARGV[2], tonumber(ARGV[3])

local now = redis.call('TIME')[1]
if device ~= '' then
  redis.call('ZREM', devices, device)
  local key = device_key(start, 'users', device, member)
  local kind, _, rooms = read_device(redis.call('GET', key))
  if kind then
    redis.call('DEL', key)
    local placed = entry('d:' .. device, member)
    local held = places_of(start, kind, member)
    for room in string.gmatch(rooms, '%S+') do
      if redis.call('ZREM', room_set(start, room, kind), placed) == 1
          and not is_in(held, room, now) then
        announce(changes_channel(start), room)
      end
    end
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
leave_everywhere(start, 'users', member)
redis.call('DEL', devices, location)
return was_hidden
