-- The samples of the past day, with the time.
--
-- KEYS[1]  the history hash (see record.lua)
--
-- Returns {now as "seconds.micros", every "minute:most" value}.

local t = redis.call('TIME')
local now = t[1] .. '.' .. string.format('%06d', tonumber(t[2]))
return {now, redis.call('HVALS', KEYS[1])}
