-- Raises the site's record ("most ever online") and today's peak from the
-- shards' figures for the minute (tick.lua), never from an estimate.
--
-- KEYS[1]  the record hash (count, at)
-- KEYS[2]  the daily peaks hash: day -> most online that day, 90 days kept
-- KEYS[3]  the shards' figures: shard number -> "minute:online:estimated"
--
-- ARGV[1]  the shard's number
-- ARGV[2]  this minute, in minutes since the epoch
-- ARGV[3]  the people online in that shard
-- ARGV[4]  '1' if that is an estimate
-- ARGV[5]  today, in days since the epoch
--
-- The site's number is the sum of each shard's figure of this minute or the
-- one before (a shard with nobody recorded lately counts none).
--
-- Returns nothing.

local record, daily_peaks, figures = KEYS[1], KEYS[2], KEYS[3]
local shard, minute, shard_online = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local shard_estimated, today = ARGV[4], tonumber(ARGV[5])

local t = redis.call('TIME')
local now = t[1] .. '.' .. string.format('%06d', tonumber(t[2]))
redis.call('HSET', figures, shard, minute .. ':' .. shard_online .. ':' .. shard_estimated)
redis.call('EXPIRE', figures, 300)
local online = 0
for _, figure in ipairs(redis.call('HVALS', figures)) do
  local at, count, estimated = string.match(figure, '^(%d+):(%d+):(%d)$')
  if tonumber(at) >= minute - 1 then
    if estimated == '1' then
      return
    end
    online = online + tonumber(count)
  end
end
if online > tonumber(redis.call('HGET', record, 'count') or '0') then
  redis.call('HSET', record, 'count', online, 'at', now)
end
local peak = redis.call('HGET', daily_peaks, today)
if not peak then
  -- A new day: forget the days older than 90.
  for _, day in ipairs(redis.call('HKEYS', daily_peaks)) do
    if tonumber(day) <= today - 90 then
      redis.call('HDEL', daily_peaks, day)
    end
  end
end
if online > tonumber(peak or '0') then
  redis.call('HSET', daily_peaks, today, online)
end
