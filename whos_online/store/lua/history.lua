-- The samples of the past day (tick.lua), with the time.
--
-- KEYS[1]  the history hash (see tick.lua)
--
-- Returns {now as "seconds.micros", every "minute:online" value}.

local t = redis.call('TIME')
local now = t[1] .. '.' .. string.format('%06d', tonumber(t[2]))
return {now, redis.call('HVALS', KEYS[1])}
