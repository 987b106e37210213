-- The Redis server's time and the generation of its presence data.
--
-- KEYS[1]  the generation key (see record.lua), set now if it is missing
--
-- Returns {now as "seconds.micros", generation}.

local t = redis.call('TIME')
local micros = string.format('%06d', tonumber(t[2]))
local generation = redis.call('GET', KEYS[1])
if not generation then
  generation = t[1] .. micros
  redis.call('SET', KEYS[1], generation)
end
return {t[1] .. '.' .. micros, generation}
