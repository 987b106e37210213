-- Records a visitor as seen now, by the Redis server's clock.
--
-- KEYS[1]  the set to record the member in (users, hidden, guests or bots)
-- KEYS[2]  the set the member leaves: hidden for users, users for hidden
--          (a user who turns hidden is never in both); else KEYS[1] again
-- KEYS[3]  the generation key, whose value changes when Redis loses its data
-- For people, also:
-- KEYS[4], KEYS[5], KEYS[6]  the users, hidden and guests sets, all counted
-- KEYS[7]  the record hash ("most ever online": count, at)
-- KEYS[8]  the history hash: a field per minute of the day, "minute:most"
-- KEYS[9]  the user's devices set (session hash -> last seen), or KEYS[1]
-- KEYS[10] the invisible set: user keys, and '' once it is loaded from the
--          database; with ARGV[7], a member in it is recorded in KEYS[2]
--          (hidden) instead
-- KEYS[11] today's users: a set of user keys, at most ARGV[3] of them
-- KEYS[12] today's guests: a HyperLogLog of the stored members
-- KEYS[13] the daily peaks hash: day -> most online that day, 90 days kept
-- KEYS[14] the locations hash: user key -> "label<TAB>path"
-- KEYS[15] this minute's HyperLogLog of KEYS[1]'s members, which estimates
--          how many are online once the set is at its cap (users and guests
--          only; else KEYS[1])
--
-- ARGV[1]  the window, in seconds
-- ARGV[2]  the member
-- ARGV[3]  the most members a set keeps; the oldest are trimmed beyond it
-- ARGV[4]  least seconds since the member's last record, or 0 for always
-- ARGV[5]  a guest to remove from KEYS[6] (the guest who just logged in) or ''
-- ARGV[6]  the device to mark in KEYS[9], or ''
-- ARGV[7]  '1' if a user may be invisible (consult KEYS[10]), else '0'
-- ARGV[8]  today, in days since the epoch
-- ARGV[9]  a user's location ("label<TAB>path"), or '' to leave it be
-- ARGV[10] '1' if these keys hold the whole site: then the record and the
--          daily peaks are raised here; '0' for one of several shards, whose
--          history is its own and whose peaks are raised by snapshots
--
-- Returns {now, generation, entered, hidden, unloaded}: now as
-- "seconds.micros", entered 1 if the member was not online before, hidden 1
-- if recorded in KEYS[2] as invisible, unloaded 1 if KEYS[10] is missing
-- (Redis lost it: the caller loads it and records again). Returns false
-- when ARGV[4] refused it.

local t = redis.call('TIME')
local micros = string.format('%06d', tonumber(t[2]))
local now = t[1] .. '.' .. micros
local since = (tonumber(t[1]) - tonumber(ARGV[1])) .. '.' .. micros
local cap = tonumber(ARGV[3])
local people = #KEYS > 3

-- "Most ever online" and today's peak, raised to ``online`` if below it.
local function raise_site_figures(online)
  local best = tonumber(redis.call('HGET', KEYS[7], 'count') or '0')
  if online > best then
    redis.call('HSET', KEYS[7], 'count', online, 'at', now)
  end
  local peak = redis.call('HGET', KEYS[13], ARGV[8])
  if not peak then
    -- A new day: forget the days older than 90.
    for _, day in ipairs(redis.call('HKEYS', KEYS[13])) do
      if tonumber(day) <= tonumber(ARGV[8]) - 90 then
        redis.call('HDEL', KEYS[13], day)
      end
    end
  end
  if online > tonumber(peak or '0') then
    redis.call('HSET', KEYS[13], ARGV[8], online)
  end
end

local target, other, hidden, unloaded = KEYS[1], KEYS[2], 0, 0
if people and ARGV[7] == '1' then
  if redis.call('EXISTS', KEYS[10]) == 0 then
    unloaded = 1
  elseif redis.call('SISMEMBER', KEYS[10], ARGV[2]) == 1 then
    target, other, hidden = KEYS[2], KEYS[1], 1
  end
end

local last = redis.call('ZSCORE', target, ARGV[2])
local least = tonumber(ARGV[4])
if least > 0 and last and tonumber(now) - tonumber(last) < least then
  return false
end

local generation = redis.call('GET', KEYS[3])
if not generation then
  generation = t[1] .. micros
  redis.call('SET', KEYS[3], generation)
end

if other ~= target then
  redis.call('ZREM', other, ARGV[2])
end
redis.call('ZADD', target, now, ARGV[2])
redis.call('EXPIRE', target, ARGV[1])
if not last then
  local size = redis.call('ZCARD', target)
  if size > cap then
    redis.call('ZREMRANGEBYRANK', target, 0, size - cap - 1)
  end
end
local entered = not last or tonumber(last) < tonumber(since)

if people then
  if target == KEYS[1] and KEYS[15] ~= KEYS[1]
      and redis.call('PFADD', KEYS[15], ARGV[2]) == 1 then
    redis.call('EXPIRE', KEYS[15], tonumber(ARGV[1]) + 120)
  end
  if ARGV[5] ~= '' then
    redis.call('ZREM', KEYS[6], ARGV[5])
  end
  if ARGV[6] ~= '' then
    redis.call('ZADD', KEYS[9], now, ARGV[6])
    redis.call('EXPIRE', KEYS[9], ARGV[1])
  end
  if ARGV[9] ~= '' and KEYS[1] ~= KEYS[6] then
    redis.call('HSET', KEYS[14], ARGV[2], ARGV[9])
    redis.call('EXPIRE', KEYS[14], ARGV[1])
  end

  -- Today's unique visitors: users exactly (up to the cap), guests estimated.
  -- A renewal finds the member counted already and stops at one call.
  if KEYS[1] == KEYS[6] then
    if redis.call('PFADD', KEYS[12], ARGV[2]) == 1 then
      redis.call('EXPIRE', KEYS[12], 172800)
    end
  elseif redis.call('SISMEMBER', KEYS[11], ARGV[2]) == 0
      and redis.call('SCARD', KEYS[11]) < cap then
    redis.call('SADD', KEYS[11], ARGV[2])
    redis.call('EXPIRE', KEYS[11], 172800)
  end

  -- Counting everyone is the dear part, so it is done only when it can change
  -- something: the number online rises only when a member enters the window,
  -- and the history wants one sample a minute.
  local minute = math.floor(tonumber(t[1]) / 60)
  local slot = minute % 1440
  local sample = redis.call('HGET', KEYS[8], slot)
  local at, most = -1, 0
  if sample then
    at, most = string.match(sample, '^(%d+):(%d+)$')
    at, most = tonumber(at), tonumber(most)
  end
  if entered or at ~= minute then
    local online = 0
    for i = 4, 6 do
      online = online + redis.call('ZCOUNT', KEYS[i], since, '+inf')
    end
    if at ~= minute or online > most then
      redis.call('HSET', KEYS[8], slot, minute .. ':' .. online)
    end
    if ARGV[10] == '1' then
      raise_site_figures(online)
    end
  end
end
return {now, generation, entered and 1 or 0, hidden, unloaded}
