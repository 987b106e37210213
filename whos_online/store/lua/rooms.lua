-- The rooms anyone was in within the window.
--
-- KEYS[1]  the rooms index (see room.lua)
--
-- ARGV[1]  the window, in seconds
--
-- Returns the room names, in no particular order.

local t = redis.call('TIME')
local since = (tonumber(t[1]) - tonumber(ARGV[1])) .. '.'
  .. string.format('%06d', tonumber(t[2]))
return redis.call('ZRANGEBYSCORE', KEYS[1], since, '+inf')
