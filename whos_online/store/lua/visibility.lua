-- A user chose to appear offline (or online again): mirror it, and move them
-- between the visible and hidden sets of the site at once.
--
-- KEYS[1]  the invisible set (see record.lua)
-- KEYS[2]  the users set
-- KEYS[3]  the hidden set
-- KEYS[4]  the user's rooms set (room name -> last visit)
--
-- ARGV[1]  the user's primary key
-- ARGV[2]  '1' to appear offline, '0' to appear online
-- ARGV[3]  the window, in seconds (the expiry of the set they join)
--
-- Returns false if KEYS[1] is missing (the caller loads it from the
-- database first), else the rooms the user is in, for the caller to move
-- them there too.

if redis.call('EXISTS', KEYS[1]) == 0 then
  return false
end
local from, to = KEYS[3], KEYS[2]
if ARGV[2] == '1' then
  redis.call('SADD', KEYS[1], ARGV[1])
  from, to = KEYS[2], KEYS[3]
else
  redis.call('SREM', KEYS[1], ARGV[1])
end
local seen = redis.call('ZSCORE', from, ARGV[1])
if seen then
  redis.call('ZREM', from, ARGV[1])
  redis.call('ZADD', to, seen, ARGV[1])
  redis.call('EXPIRE', to, ARGV[3])
end
return redis.call('ZRANGE', KEYS[4], 0, -1)
