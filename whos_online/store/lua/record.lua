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
-- KEYS[5]  today's visitors: a set of the keys of users seen visible, or a
--          HyperLogLog of guests
-- For guests, also:
-- KEYS[6]  today's logins (see forget_guest.lua), which a guest recorded
--          anew leaves
-- For users (the kinds users and hidden), also:
-- KEYS[6]  the hidden set; a user is in at most one of KEYS[1] and KEYS[6]
-- KEYS[7]  the user's devices set (session hash -> last seen)
-- KEYS[8]  the shard's last-seen set (user key -> last seen), kept beyond
--          the window, at most ARGV[4] users
--
-- ARGV[1]  the kind: users, hidden, guests or bots
-- ARGV[2]  the member
-- ARGV[3]  the window, in seconds
-- ARGV[4]  the most members a set keeps
-- ARGV[5]  the device to mark in KEYS[7], or ''
-- ARGV[6]  how long KEYS[8] is kept, in seconds ('0': no last seen is kept)
-- ARGV[7]  '1' for a guest who just logged out: they join today's logins
--          (KEYS[6]), so today's figures count them as the user they were
--
-- The caller says whether a user is hidden (the kind hidden): the database
-- keeps their choice, Redis no copy of it. A member new to a set that is
-- at its cap takes the place of a member who left the window, never of one
-- online: when there is none, it is only counted in KEYS[4].
--
-- A renewal the caller can vouch for is cheaper in plain commands (see
-- Writes._renewed): what it does must stay what this script does for a
-- member already online (tests/test_renewal.py runs both on the same cases).
--
-- Returns, as one string of words (one reply, not five, for the caller to
-- read), now as "seconds.micros", the generation, entered (1 if the member
-- was not online before), moved (1 if a user left the other of KEYS[1] and
-- KEYS[6]: their choice changed, and the caller moves them in their rooms)
-- and tick (1 if this is the shard's first record of the minute: the caller
-- runs tick.lua).

local t = redis.call('TIME')
local micros = string.format('%06d', tonumber(t[2]))
local now = t[1] .. '.' .. micros
local since = (tonumber(t[1]) - tonumber(ARGV[3])) .. '.' .. micros
local kind, member = ARGV[1], ARGV[2]
local is_user = kind == 'users' or kind == 'hidden'

local target, other = KEYS[1], nil
if kind == 'users' then
  other = KEYS[6]
elseif kind == 'hidden' then
  target, other = KEYS[6], KEYS[1]
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

local moved = 0
if room then
  if other then
    moved = redis.call('ZREM', other, member)
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
      if ARGV[7] == '1' then
        if redis.call('SCARD', KEYS[6]) < tonumber(ARGV[4]) then
          redis.call('SADD', KEYS[6], member)
          redis.call('EXPIRE', KEYS[6], 172800)
        end
      else
        redis.call('SREM', KEYS[6], member)
      end
    elseif kind == 'users' and redis.call('SCARD', KEYS[5]) < tonumber(ARGV[4]) then
      -- A hidden user is not a visitor anyone is told of.
      redis.call('SADD', KEYS[5], member)
      redis.call('EXPIRE', KEYS[5], 172800)
    end
  end
end

if is_user and room and ARGV[5] ~= '' then
  -- Devices not seen within the window leave, and a user keeps at most 5,
  -- so memory and logging out stay bounded.
  if redis.call('ZADD', KEYS[7], now, ARGV[5]) == 1 then
    redis.call('ZREMRANGEBYRANK', KEYS[7], 0, -6)
  end
  redis.call('ZREMRANGEBYSCORE', KEYS[7], '-inf', '(' .. since)
  redis.call('EXPIRE', KEYS[7], ARGV[3])
end
if is_user and room and ARGV[6] ~= '0' then
  -- A user new to the last-seen set at its cap takes the oldest's place.
  if redis.call('ZADD', KEYS[8], now, member) == 1
      and redis.call('ZCARD', KEYS[8]) > tonumber(ARGV[4]) then
    redis.call('ZREMRANGEBYRANK', KEYS[8], 0, 0)
  end
  redis.call('EXPIRE', KEYS[8], ARGV[6])
end
return table.concat({now, generation, entered and 1 or 0, moved, tick}, ' ')
