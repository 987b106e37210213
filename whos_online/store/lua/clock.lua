-- The Redis server's time and the generation of a shard's presence data. It
-- only reads: a missing generation (Redis lost the data) is '', which no
-- guard names, and the next record sets a new one.
--
-- KEYS[1]  the shard's meta hash (see record.lua)
--
-- Returns {now as "seconds.micros", generation or ''}.

local t = redis.call('TIME')
local now = t[1] .. '.' .. string.format('%06d', tonumber(t[2]))
return {now, redis.call('HGET', KEYS[1], 'generation') or ''}
