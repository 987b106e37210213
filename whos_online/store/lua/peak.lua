-- Raises the site's record ("most ever online") and today's peak to a
-- number of people online now, counted in every shard at once (online.lua)
-- when a newcomer arrived: with several shards, a peak between two minutes'
-- figures is kept, as record.lua keeps it with one.
--
-- KEYS[1]  the record hash (count, at)
-- KEYS[2]  the daily peaks hash: day -> most online that day
--
-- ARGV[1]  the people online now
-- ARGV[2]  today, in days since the epoch
--
-- A new day's first peak is raise.lua's, which forgets days past 90.
--
-- Returns nothing.

local record, daily_peaks = KEYS[1], KEYS[2]
local online, today = tonumber(ARGV[1]), ARGV[2]

local t = redis.call('TIME')
local now = t[1] .. '.' .. string.format('%06d', tonumber(t[2]))
local peak = redis.call('HGET', daily_peaks, today)
if peak and online > tonumber(peak) then
  redis.call('HSET', daily_peaks, today, online)
end
if online > tonumber(redis.call('HGET', record, 'count') or '0') then
  redis.call('HSET', record, 'count', online, 'at', now)
end
