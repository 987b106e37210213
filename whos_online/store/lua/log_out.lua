-- A user logged out on one device: take them off the lists unless another
-- device of theirs was seen within the guard period.
--
-- KEYS[1]  the users set
-- KEYS[2]  the hidden set
-- KEYS[3]  the user's devices set (session hash -> last seen)
-- KEYS[4]  the user's rooms set (room name -> last visit)
-- KEYS[5]  the locations hash (see record.lua)
--
-- ARGV[1]  the user's primary key
-- ARGV[2]  the device that logged out, or ''
-- ARGV[3]  the guard period, in seconds
--
-- Returns false if the user stays online elsewhere, else {1 if they were
-- hidden else 0, the rooms they were in} (the caller removes them from those
-- rooms' sets).

local t = redis.call('TIME')
if ARGV[2] ~= '' then
  redis.call('ZREM', KEYS[3], ARGV[2])
end
local recent = tonumber(t[1]) - tonumber(ARGV[3])
if redis.call('ZCOUNT', KEYS[3], recent, '+inf') > 0 then
  return false
end
redis.call('ZREM', KEYS[1], ARGV[1])
local hidden = redis.call('ZREM', KEYS[2], ARGV[1])
local rooms = redis.call('ZRANGE', KEYS[4], 0, -1)
redis.call('DEL', KEYS[3], KEYS[4])
redis.call('HDEL', KEYS[5], ARGV[1])
return {hidden, rooms}
