-- Who is online now: lists and counts of every kind, the record and the time.
--
-- KEYS[1..4]  the users, hidden, guests and bots sets (of the site or a room)
-- KEYS[5]     the site's record hash ("most ever online": count, at)
-- KEYS[6]     the site's history hash (see record.lua)
-- KEYS[7]     the generation key (see record.lua)
-- KEYS[8]     today's users set, KEYS[9] today's guests HyperLogLog, and
-- KEYS[10]    the daily peaks hash (see record.lua)
-- KEYS[11]    the locations hash (see record.lua)
--
-- ARGV[1]     the window, in seconds
-- ARGV[2..5]  how many to list of each set, newest first
-- ARGV[6]     '1' for the site's sets: then the people counted here also
--             sample the history and may raise the record, so that a minute
--             in which everyone is guarded still has its point; '2' for one
--             shard of several: it samples its own history only (the caller
--             raises the record from the sum); '0' for a room
-- ARGV[7]     today, in days since the epoch
--
-- Returns {now, {users, hidden, guests, bots} as flat member/score lists,
-- {four counts}, {record count, record at}, generation, {users today, guests
-- today (estimated), most online today}, {locations of the users listed,
-- of the hidden users listed}}; today's figures are the site's.

local t = redis.call('TIME')
local micros = string.format('%06d', tonumber(t[2]))
local now = t[1] .. '.' .. micros
local since = (tonumber(t[1]) - tonumber(ARGV[1])) .. '.' .. micros

local listed, counts = {}, {}
for i = 1, 4 do
  listed[i] = {}
  if tonumber(ARGV[i + 1]) > 0 then
    listed[i] = redis.call('ZREVRANGEBYSCORE', KEYS[i], '+inf', since,
                           'WITHSCORES', 'LIMIT', 0, ARGV[i + 1])
  end
  counts[i] = redis.call('ZCOUNT', KEYS[i], since, '+inf')
end

local generation = redis.call('GET', KEYS[7])
if not generation then
  generation = t[1] .. micros
  redis.call('SET', KEYS[7], generation)
end

if ARGV[6] ~= '0' then
  local online = counts[1] + counts[2] + counts[3]
  local minute = math.floor(tonumber(t[1]) / 60)
  local slot = minute % 1440
  local sample = redis.call('HGET', KEYS[6], slot)
  local at, most = -1, 0
  if sample then
    at, most = string.match(sample, '^(%d+):(%d+)$')
    at, most = tonumber(at), tonumber(most)
  end
  if online > 0 and (at ~= minute or online > most) then
    redis.call('HSET', KEYS[6], slot, minute .. ':' .. online)
  end
end
if ARGV[6] == '1' then
  local online = counts[1] + counts[2] + counts[3]
  local best = tonumber(redis.call('HGET', KEYS[5], 'count') or '0')
  if online > best then
    redis.call('HSET', KEYS[5], 'count', online, 'at', now)
  end
  local peak = tonumber(redis.call('HGET', KEYS[10], ARGV[7]) or '0')
  if online > peak then
    redis.call('HSET', KEYS[10], ARGV[7], online)
  end
end

local record = redis.call('HMGET', KEYS[5], 'count', 'at')
local day = {
  redis.call('SCARD', KEYS[8]),
  redis.call('PFCOUNT', KEYS[9]),
  tonumber(redis.call('HGET', KEYS[10], ARGV[7]) or '0'),
}
local where = {{}, {}}
for i = 1, 2 do
  local members = {}
  for j = 1, #listed[i], 2 do
    members[#members + 1] = listed[i][j]
  end
  if #members > 0 then
    where[i] = redis.call('HMGET', KEYS[11], unpack(members))
  end
end
return {now, listed, counts, record, generation, day, where}
