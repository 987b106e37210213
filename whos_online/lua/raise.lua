-- Raises the site's record and today's peak to the number online now, when
-- it is higher: for sharded sets, whose shards cannot raise them (the sum of
-- the shards' counts is known only to the caller).
--
-- KEYS[1]  the site's record hash (see record.lua)
-- KEYS[2]  the site's daily peaks hash (see record.lua)
--
-- ARGV[1]  the number of people online now, summed over the shards
-- ARGV[2]  today, in days since the epoch
--
-- Returns {record count, record at, today's peak} after raising.

local t = redis.call('TIME')
local now = t[1] .. '.' .. string.format('%06d', tonumber(t[2]))
local online = tonumber(ARGV[1])
if online > tonumber(redis.call('HGET', KEYS[1], 'count') or '0') then
  redis.call('HSET', KEYS[1], 'count', online, 'at', now)
end
local peak = redis.call('HGET', KEYS[2], ARGV[2])
if not peak then
  for _, day in ipairs(redis.call('HKEYS', KEYS[2])) do
    if tonumber(day) <= tonumber(ARGV[2]) - 90 then
      redis.call('HDEL', KEYS[2], day)
    end
  end
end
if online > tonumber(peak or '0') then
  redis.call('HSET', KEYS[2], ARGV[2], online)
  peak = online
end
local record = redis.call('HMGET', KEYS[1], 'count', 'at')
return {record[1], record[2], tonumber(peak or '0')}
