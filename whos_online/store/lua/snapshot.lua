-- Who is online now: lists and counts of every kind, and the time. It only
-- reads, so it answers while Redis refuses writes.
--
-- KEYS[1..4]  the users, hidden, guests and bots sets (of the site or a room:
--             a room's hold places, each member counted once)
-- KEYS[5]     the shard's meta hash (see record.lua)
-- For the site's sets, also:
-- KEYS[6]     the start of the shard's keys, "{tag}:": the location of each
--             user listed is read from its key (prelude.lua), keys
--             of the same hash tag, so of the same cluster slot
-- KEYS[7]     today's users set, KEYS[8] today's guests HyperLogLog, and
-- KEYS[9]     today's logins: the guests who logged in (see forget_guest.lua)
-- KEYS[10]    the users set's estimate, KEYS[11] the guests set's (tick.lua)
--
-- ARGV[1]     the window, in seconds
-- ARGV[2..5]  how many to list of each set, newest first
-- ARGV[6]     the most members a set keeps
-- ARGV[7]     how many of today's users to name (KEYS[7]; any of them)
--
-- Returns {now, {users, hidden, guests, bots} as flat member/score lists,
-- {four counts}, generation or '', and for the site's sets {users today,
-- guests today, guests who logged in today}, {locations of the users listed,
-- of the hidden users listed}, {the estimates of the users and guests sets,
-- -1 for a set below its cap}, today's users named}.

-- The four sets of the site or a room, by kind: users, hidden, guests, bots.
local sets = {KEYS[1], KEYS[2], KEYS[3], KEYS[4]}
local meta = KEYS[5]
local window, most_members = tonumber(ARGV[1]), tonumber(ARGV[6])
local today_named = tonumber(ARGV[7])
local wanted = {ARGV[2], ARGV[3], ARGV[4], ARGV[5]}

local t = redis.call('TIME')
local micros = string.format('%06d', tonumber(t[2]))
local now = t[1] .. '.' .. micros
local since = (tonumber(t[1]) - window) .. '.' .. micros

local listed, counts = {}, {}
for i, set in ipairs(sets) do
  listed[i] = {}
  if #KEYS == 5 then  -- a room's: places (prelude.lua's present)
    listed[i], counts[i] = present(set, since, tonumber(wanted[i]))
  elseif tonumber(wanted[i]) > 0 then
    listed[i] = redis.call('ZREVRANGEBYSCORE', set, '+inf', since,
                           'WITHSCORES', 'LIMIT', 0, wanted[i])
  end
  if #KEYS > 5 then
    counts[i] = redis.call('ZCOUNT', set, since, '+inf')
  end
end
local generation = redis.call('HGET', meta, 'generation') or ''
if #KEYS == 5 then
  return {now, listed, counts, generation}
end

local start, users_today, guests_today, logins_today = KEYS[6], KEYS[7], KEYS[8], KEYS[9]
local estimates_of = {KEYS[10], KEYS[11]}  -- the users', the guests'
local day = {
  redis.call('SCARD', users_today),
  redis.call('PFCOUNT', guests_today),
  redis.call('SCARD', logins_today),
}
local where = {{}, {}}
for i = 1, 2 do  -- the users and the hidden users listed
  for j = 1, #listed[i], 2 do
    where[i][#where[i] + 1] = redis.call('GET', location_key(start, listed[i][j]))
  end
end
local estimates = {-1, -1}
for i, set in ipairs({sets[1], sets[3]}) do
  if redis.call('ZCARD', set) >= most_members then
    estimates[i] = redis.call('PFCOUNT', estimates_of[i])
  end
end
local named = {}
if today_named > 0 then
  named = redis.call('SRANDMEMBER', users_today, today_named)
end
return {now, listed, counts, generation, day, where, estimates, named}
