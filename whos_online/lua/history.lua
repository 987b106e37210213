-- The samples of the past day, and the daily peaks, with the time.
--
-- KEYS[1]  the history hash (see record.lua)
-- KEYS[2]  the daily peaks hash (see record.lua)
--
-- Returns {now as "seconds.micros", every "minute:most" value, the daily
-- peaks as a flat day/peak list}.

local t = redis.call('TIME')
local now = t[1] .. '.' .. string.format('%06d', tonumber(t[2]))
return {now, redis.call('HVALS', KEYS[1]), redis.call('HGETALL', KEYS[2])}
