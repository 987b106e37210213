-- Who is online now: lists and counts of every kind, and the time. It only
-- reads, so it answers while Redis refuses writes.
--
-- KEYS[1..4]  the users, hidden, guests and bots sets (of the site or a room)
-- KEYS[5]     the shard's meta hash (see record.lua)
-- For the site's sets, also:
-- KEYS[6]     the start of the shard's keys, "{tag}:": the location of each
--             user listed is read from "where:PK" (see record.lua), keys
--             of the same hash tag, so of the same cluster slot
-- KEYS[7]     today's users set, KEYS[8] today's guests HyperLogLog, and
-- KEYS[9]     today's logins: the guests who logged in (see forget_guest.lua)
-- KEYS[10]    the users set's estimate, KEYS[11] the guests set's (tick.lua)
--
-- ARGV[1]     the window, in seconds
-- ARGV[2..5]  how many to list of each set, newest first
-- ARGV[6]     the most members a set keeps
--
-- Returns {now, {users, hidden, guests, bots} as flat member/score lists,
-- {four counts}, generation or '', and for the site's sets {users today,
-- guests today, guests who logged in today}, {locations of the users listed,
-- of the hidden users listed}, {the estimates of the users and guests sets,
-- -1 for a set below its cap}}.

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
local generation = redis.call('HGET', KEYS[5], 'generation') or ''
if #KEYS == 5 then
  return {now, listed, counts, generation}
end

local day = {
  redis.call('SCARD', KEYS[7]),
  redis.call('PFCOUNT', KEYS[8]),
  redis.call('SCARD', KEYS[9]),
}
local where = {{}, {}}
for i = 1, 2 do
  local members = {}
  for j = 1, #listed[i], 2 do
    members[#members + 1] = listed[i][j]
  end
  for j, member in ipairs(members) do
    where[i][j] = redis.call('GET', KEYS[6] .. 'where:' .. member)
  end
end
local estimates = {-1, -1}
for i, set in ipairs({1, 3}) do
  if redis.call('ZCARD', KEYS[set]) >= tonumber(ARGV[6]) then
    estimates[i] = redis.call('PFCOUNT', KEYS[9 + i])
  end
end
return {now, listed, counts, generation, day, where, estimates}
