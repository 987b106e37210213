-- Forgets when users were last seen, once that is older than the last-seen
-- set is kept for.
--
-- KEYS[1]  the last-seen set (see record.lua)
--
-- ARGV[1]  how long it is kept, in seconds
--
-- Returns how many users were forgotten.

local t = redis.call('TIME')
local since = tonumber(t[1]) - tonumber(ARGV[1])
return redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. since)
