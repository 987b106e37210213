-- A user chose to appear offline (or online again): move them between the
-- visible and hidden sets of the site at once. The database keeps the
-- choice; Redis keeps no copy of it.
--
-- KEYS[1]  the users set
-- KEYS[2]  the hidden set
-- KEYS[3]  the user's rooms set (room name -> last visit)
--
-- ARGV[1]  the user's primary key
-- ARGV[2]  '1' to appear offline, '0' to appear online
-- ARGV[3]  the window, in seconds (the expiry of the set they join)
--
-- Returns the rooms the user is in, for the caller to move them there too.

local from, to = KEYS[1], KEYS[2]
if ARGV[2] ~= '1' then
  from, to = KEYS[2], KEYS[1]
end
local seen = redis.call('ZSCORE', from, ARGV[1])
if seen then
  redis.call('ZREM', from, ARGV[1])
  redis.call('ZADD', to, seen, ARGV[1])
  redis.call('EXPIRE', to, ARGV[3])
end
return redis.call('ZRANGE', KEYS[3], 0, -1)
