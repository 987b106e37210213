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

local users, hidden, guests, history = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local users_estimate, guests_estimate = KEYS[5], KEYS[6]
local window, most_members = tonumber(ARGV[1]), tonumber(ARGV[2])
local minute, span = ARGV[3], tonumber(ARGV[4])
-- The closed minutes' HyperLogLogs, of the users then of the guests.
local function minutes_of(place)
  local first = 7 + place * span
  return unpack(KEYS, first, first + span - 1)
end

for _, set in ipairs({users, hidden, guests}) do
  redis.call('EXPIRE', set, window)
end
local t = redis.call('TIME')
local since = (tonumber(t[1]) - window) .. '.' .. string.format('%06d', tonumber(t[2]))
local online, estimated = 0, 0
for place, visible in ipairs({{users, users_estimate}, {guests, guests_estimate}}) do
  local set, estimate = visible[1], visible[2]
  local count = redis.call('ZCOUNT', set, since, '+inf')
  if redis.call('ZCARD', set) >= most_members then
    redis.call('PFMERGE', estimate, minutes_of(place - 1))
    redis.call('EXPIRE', estimate, window + 120)
    count = math.max(count, redis.call('PFCOUNT', estimate))
    estimated = 1
  end
  online = online + count
end
redis.call('HSET', history, tonumber(minute) % 1440, minute .. ':' .. online)
return {online, estimated}
