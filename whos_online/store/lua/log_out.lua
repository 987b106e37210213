-- A user logged out on one device: take them off the lists, and out of every
-- room they are in, unless another device of theirs was seen within the
-- guard period.
--
-- KEYS[1]  the users set
-- KEYS[2]  the hidden set
-- KEYS[3]  the user's devices set (session hash -> last seen)
-- KEYS[4]  the user's rooms set (room name -> last visit; see room.lua)
-- KEYS[5]  the user's location (see Writes.set_location)
-- KEYS[6]  the room sizes (see room.lua)
-- KEYS[7]  the room members (see room.lua)
-- KEYS[8]  the start of the shard's keys, "{tag}:": the rooms' sets are named
--          from it ("{tag}:room:NAME:KIND"), keys of the same hash tag
--
-- ARGV[1]  the user's primary key
-- ARGV[2]  the device that logged out, or ''
-- ARGV[3]  the guard period, in seconds
--
-- Returns false if the user stays online elsewhere, else 1 if they were
-- hidden, 0 if not. The places they held in rooms are free at once.

local users, hidden, devices, rooms_of = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local location, sizes, members_key, prefix = KEYS[5], KEYS[6], KEYS[7], KEYS[8]
local member, device, guard_seconds = ARGV[1], ARGV[2], tonumber(ARGV[3])

local t = redis.call('TIME')
if device ~= '' then
  redis.call('ZREM', devices, device)
end
if redis.call('ZCOUNT', devices, tonumber(t[1]) - guard_seconds, '+inf') > 0 then
  return false
end
redis.call('ZREM', users, member)
local was_hidden = redis.call('ZREM', hidden, member)
for _, name in ipairs(redis.call('ZRANGE', rooms_of, 0, -1)) do
  local left = redis.call('ZREM', prefix .. 'room:' .. name .. ':users', member)
    + redis.call('ZREM', prefix .. 'room:' .. name .. ':hidden', member)
  if left > 0 then
    redis.call('ZINCRBY', sizes, -left, name)
    redis.call('DECRBY', members_key, left)
  end
end
redis.call('DEL', devices, rooms_of, location)
return was_hidden
