-- Removes members last seen before the window from one of the site's sets,
-- boundedly.
--
-- KEYS[1]  the set
-- KEYS[2]  a scratch key
--
-- ARGV[1]  the window, in seconds
-- ARGV[2]  the batch: the most members removed, or kept by copying, at once
-- ARGV[3]  '1' to only count the stale members
-- ARGV[4]  '1' to remove one batch of the oldest stale members and return
--          them (users and hidden, whose leaving is announced)
-- ARGV[5]  the most members online kept by copying them out
--
-- What is kept for each user (devices, rooms, location) expires with their
-- presence. Counting and removing in one script means a member seen again
-- meanwhile is never removed. Of two ways, the one that blocks Redis for
-- less:
-- - mostly stale with at most ARGV[5] online: copy those online to the
--   scratch key, UNLINK the set (freed in Redis' background thread) and put
--   the copy in its place, with the set's expiry;
-- - otherwise remove one batch of the stale members, who hold the lowest ranks.
--
-- Returns how many members were (or, counting, would be) removed, or with
-- ARGV[4] the members removed.

local t = redis.call('TIME')
local since = '(' .. (tonumber(t[1]) - tonumber(ARGV[1])) .. '.'
  .. string.format('%06d', tonumber(t[2]))
local batch, most_copied = tonumber(ARGV[2]), tonumber(ARGV[5])
if ARGV[3] == '1' then
  return redis.call('ZCOUNT', KEYS[1], '-inf', since)
end
if ARGV[4] == '1' then
  local leaving = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', since, 'LIMIT', 0, batch)
  if #leaving > 0 then
    redis.call('ZREM', KEYS[1], unpack(leaving))
  end
  return leaving
end
local stale = redis.call('ZCOUNT', KEYS[1], '-inf', since)
if stale == 0 then
  return 0
end
local online = redis.call('ZCARD', KEYS[1]) - stale
if stale > online and online <= most_copied then
  local ttl = redis.call('PTTL', KEYS[1])
  if online > 0 then
    redis.call('ZRANGESTORE', KEYS[2], KEYS[1], string.sub(since, 2), '+inf', 'BYSCORE')
  end
  redis.call('UNLINK', KEYS[1])
  if online > 0 then
    redis.call('RENAME', KEYS[2], KEYS[1])
    if ttl > 0 then
      redis.call('PEXPIRE', KEYS[1], ttl)
    end
  end
  return stale
end
local n = math.min(stale, batch)
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, n - 1)
return n
