-- Records a visitor as seen now, by the Redis server's clock: the one script
-- every record runs, kept to what presence needs (the score, the expiry, the
-- cap); the site's figures are kept once a minute by tick.lua.
--
-- KEYS[1]  the set of the member's kind: users (for the kinds users and
--          hidden), guests or bots
-- KEYS[2]  the shard's meta hash: "generation", an id that changes when Redis
--          loses its data
-- KEYS[3]  this minute's tick key: the first record of the minute sets it
-- For people (the kinds users, hidden and guests), also:
-- KEYS[4]  this minute's HyperLogLog of the users or guests recorded, which
--          counts a set that is at its cap
-- KEYS[5]  today's visitors: a set of user keys, or a HyperLogLog of guests
-- For guests, also:
-- KEYS[6]  today's logins (see forget_guest.lua), which a guest recorded
--          anew leaves
-- For users (the kinds users and hidden), also:
-- KEYS[6]  the hidden set; a user is in at most one of KEYS[1] and KEYS[6]
-- KEYS[7]  the invisible set: keys of users who chose to appear offline, and
--          '' once it is loaded from the database
-- KEYS[8]  the user's devices set (session hash -> last seen)
--
-- ARGV[1]  the kind: users, hidden, guests or bots
-- ARGV[2]  the member
-- ARGV[3]  the window, in seconds
-- ARGV[4]  the most members a set keeps
-- ARGV[5]  the device to mark in KEYS[8], or ''
-- ARGV[6]  '1' if users may choose to be invisible (consult KEYS[7])
--
-- A user of kind users is recorded as hidden when they chose to be, and also
-- while KEYS[7] is missing (Redis lost it): privacy fails closed until the
-- caller loads the mirror and records again. A member new to a set that is
-- at its cap takes the place of a member who left the window, never of one
-- online: when there is none, it is only counted in KEYS[4].
--
-- A renewal the caller can vouch for is cheaper in plain commands (see
-- Writes._renewed): what it does must stay what this script does for a
-- member already online.
--
-- Returns, as one string of words (one reply, not six, for the caller to
-- read), now as "seconds.micros", the generation, entered (1 if the member
-- was not online before), hidden (1 if recorded in KEYS[6]), unloaded (1 if
-- KEYS[7] is missing) and tick (1 if this is the shard's first record of the
-- minute: the caller runs tick.lua).

local t = redis.call('TIME')
local micros = string.format('%06d', tonumber(t[2]))
local now = t[1] .. '.' .. micros
local since = (tonumber(t[1]) - tonumber(ARGV[3])) .. '.' .. micros
local kind, member = ARGV[1], ARGV[2]
local is_user = kind == 'users' or kind == 'hidden'

local target, other, hidden, unloaded = KEYS[1], nil, 0, 0
if is_user then
  other = KEYS[6]
  if kind == 'hidden' then
    hidden = 1
  elseif ARGV[6] == '1' then
    local mirror = redis.call('SMISMEMBER', KEYS[7], '', member)
    if mirror[1] == 0 then
      hidden, unloaded = 1, 1
    elseif mirror[2] == 1 then
      hidden = 1
    end
  end
  if hidden == 1 then
    target, other = KEYS[6], KEYS[1]
  end
end

local last = redis.call('ZSCORE', target, member)

local generation = redis.call('HGET', KEYS[2], 'generation')
if not generation then
  generation = t[1] .. micros
  redis.call('HSET', KEYS[2], 'generation', generation)
end
local tick = redis.call('SET', KEYS[3], '1', 'NX', 'EX', 120) and 1 or 0

local room = true
if not last then
  if redis.call('ZCARD', target) >= tonumber(ARGV[4]) then
    local stale = redis.call('ZCOUNT', target, '-inf', '(' .. since)
    if stale > 0 then
      redis.call('ZREMRANGEBYRANK', target, 0, math.min(stale, 100) - 1)
    else
      room = false
    end
  end
end
local entered = room and (not last or tonumber(last) < tonumber(since))

if room then
  if other then
    redis.call('ZREM', other, member)
  end
  redis.call('ZADD', target, now, member)
  redis.call('EXPIRE', target, ARGV[3])
end

if kind ~= 'bots' then
  if target == KEYS[1] and redis.call('PFADD', KEYS[4], member) == 1 then
    redis.call('EXPIRE', KEYS[4], tonumber(ARGV[3]) + 120)
  end
  -- Today's visitors change only when someone comes online, or is seen for
  -- the first time since midnight.
  local midnight = tonumber(t[1]) - tonumber(t[1]) % 86400
  if room and (entered or tonumber(last) < midnight) then
    if not is_user then
      redis.call('PFADD', KEYS[5], member)
      redis.call('EXPIRE', KEYS[5], 172800)
      redis.call('SREM', KEYS[6], member)
    elseif redis.call('SCARD', KEYS[5]) < tonumber(ARGV[4]) then
      redis.call('SADD', KEYS[5], member)
      redis.call('EXPIRE', KEYS[5], 172800)
    end
  end
end

if is_user and room and ARGV[5] ~= '' then
  -- Devices not seen within the window leave, and a user keeps at most 5,
  -- so memory and logging out stay bounded.
  if redis.call('ZADD', KEYS[8], now, ARGV[5]) == 1 then
    redis.call('ZREMRANGEBYRANK', KEYS[8], 0, -6)
  end
  redis.call('ZREMRANGEBYSCORE', KEYS[8], '-inf', '(' .. since)
  redis.call('EXPIRE', KEYS[8], ARGV[3])
end
return table.concat({now, generation, entered and 1 or 0, hidden, unloaded, tick}, ' ')
