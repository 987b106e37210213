-- A shard's figures for the minute, kept once a minute (by the first record
-- of each minute) instead of on every record; and the expiry of its sets,
-- which renewals in plain commands do not touch.
--
-- KEYS[1..3]  the users, hidden and guests sets
-- KEYS[4]     the history hash: a field per minute of the day,
--             "minute:online"
-- KEYS[5]     the estimate of the users set, KEYS[6] of the guests set: the
--             union of the HyperLogLogs of the window's closed minutes
-- KEYS[7..]   those minutes' HyperLogLogs: ARGV[4] of the users', then as
--             many of the guests'
--
-- ARGV[1]     the window, in seconds
-- ARGV[2]     the most members a set keeps
-- ARGV[3]     this minute, in minutes since the epoch
-- ARGV[4]     how many closed minutes the window spans
--
-- A users or guests set at its cap is counted by its estimate, made afresh
-- here; it is made only then.
--
-- Hidden users are not counted in the figures: a hidden user looks exactly
-- like one who is offline, so their arrival moves no figure anyone sees.
--
-- Returns {people online and visible, 1 if that number is an estimate
-- else 0}.

for i = 1, 3 do
  redis.call('EXPIRE', KEYS[i], ARGV[1])
end
local t = redis.call('TIME')
local since = (tonumber(t[1]) - tonumber(ARGV[1])) .. '.'
  .. string.format('%06d', tonumber(t[2]))
local span = tonumber(ARGV[4])
-- The users and guests sets, by their place among the estimates.
local places = {[1] = 0, [3] = 1}
local online, estimated = 0, 0
for _, i in ipairs({1, 3}) do
  local count = redis.call('ZCOUNT', KEYS[i], since, '+inf')
  local place = places[i]
  if place and redis.call('ZCARD', KEYS[i]) >= tonumber(ARGV[2]) then
    local first = 7 + place * span
    redis.call('PFMERGE', KEYS[5 + place], unpack(KEYS, first, first + span - 1))
    redis.call('EXPIRE', KEYS[5 + place], tonumber(ARGV[1]) + 120)
    count = math.max(count, redis.call('PFCOUNT', KEYS[5 + place]))
    estimated = 1
  end
  online = online + count
end
redis.call('HSET', KEYS[4], tonumber(ARGV[3]) % 1440, ARGV[3] .. ':' .. online)
return {online, estimated}
