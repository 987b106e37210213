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
-- ARGV[8]  today, in days since the epoch, when the site has one shard;
--          then the last three keys are the other visible set of people
--          (guests for a user, users for a guest), the site's record and its
--          daily peaks, which a newcomer raises at once (else '': tick.lua
--          and raise.lua keep them, once a minute)
-- ARGV[9]  the shard's changes channel (keys.Shard.changes): a member who
--          comes online, or a user who moved between the visible and hidden
--          sets, is announced there as '*' (the site's lists changed); a
--          renewal announces nothing
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
-- Returns, as one string of words (one reply, not eight, for the caller to
-- read), now as "seconds.micros", the generation, entered (1 if the member
-- was not online before), moved (1 if a user left the other of KEYS[1] and
-- KEYS[6]: their choice changed, and the caller moves them in their rooms),
-- tick (1 if this is the shard's first record of the minute: the caller
-- runs tick.lua), and what a newcomer found, raising the site's figures at
-- once, for a login in the same request to take back (forget_guest.lua):
-- the people online, today's peak before ('none' if it had none) and the
-- record before as "count,at" ('none' if there was none); '-' '-' '-'
-- when the figures were not asked.

local kind, member = ARGV[1], ARGV[2]
local window, most_members, device = tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5]
local last_seen_kept, logged_out, day = ARGV[6], ARGV[7] == '1', ARGV[8]
local channel = ARGV[9]
local is_user = kind == 'users' or kind == 'hidden'
local kind_set, meta, tick_key, seen_this_minute, today = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local logins, hidden_set, devices, last_seen
local other_people, record, daily_peaks
if day ~= '' then
  other_people, record, daily_peaks = KEYS[#KEYS - 2], KEYS[#KEYS - 1], KEYS[#KEYS]
end
if is_user then
  hidden_set, devices, last_seen = KEYS[6], KEYS[7], KEYS[8]
elseif kind == 'guests' then
  logins = KEYS[6]
end

local t = redis.call('TIME')
local micros = string.format('%06d', tonumber(t[2]))
local now = t[1] .. '.' .. micros
local since = (tonumber(t[1]) - window) .. '.' .. micros

local target, other = kind_set, nil
if kind == 'users' then
  other = hidden_set
elseif kind == 'hidden' then
  target, other = hidden_set, kind_set
end

local last = redis.call('ZSCORE', target, member)

local generation = redis.call('HGET', meta, 'generation')
if not generation then
  generation = t[1] .. micros
  redis.call('HSET', meta, 'generation', generation)
end
local tick = redis.call('SET', tick_key, '1', 'NX', 'EX', 120) and 1 or 0

local room = true
if not last then
  if redis.call('ZCARD', target) >= most_members then
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
  redis.call('EXPIRE', target, window)
end

if kind ~= 'bots' then
  -- The estimates count the visible sets only.
  if target == kind_set and redis.call('PFADD', seen_this_minute, member) == 1 then
    redis.call('EXPIRE', seen_this_minute, window + 120)
  end
  -- Today's visitors change only when someone comes online, or is seen for
  -- the first time since midnight.
  local midnight = tonumber(t[1]) - tonumber(t[1]) % 86400
  if room and (entered or tonumber(last) < midnight) then
    if not is_user then
      redis.call('PFADD', today, member)
      redis.call('EXPIRE', today, 172800)
      if not logged_out then
        redis.call('SREM', logins, member)
      elseif redis.call('SCARD', logins) < most_members then
        redis.call('SADD', logins, member)
        redis.call('EXPIRE', logins, 172800)
      end
    elseif kind == 'users' and redis.call('SCARD', today) < most_members then
      -- A hidden user is not a visitor anyone is told of.
      redis.call('SADD', today, member)
      redis.call('EXPIRE', today, 172800)
    end
  end
end

-- A newcomer raises the site's figures at once: a peak between two minutes'
-- figures is kept, so the most online never falls back. Sets at their cap
-- are left to the estimates, once a minute.
local found_online, peak_before, record_before = '-', '-', '-'
if entered and day ~= '' and target == kind_set and kind ~= 'bots'
    and redis.call('ZCARD', kind_set) < most_members
    and redis.call('ZCARD', other_people) < most_members then
  local online = redis.call('ZCOUNT', kind_set, since, '+inf')
    + redis.call('ZCOUNT', other_people, since, '+inf')
  -- A new day's first peak is raise.lua's, which forgets days past 90.
  local peak = redis.call('HGET', daily_peaks, day)
  if peak and online > tonumber(peak) then
    redis.call('HSET', daily_peaks, day, online)
  end
  local best = redis.call('HMGET', record, 'count', 'at')
  if online > tonumber(best[1] or '0') then
    redis.call('HSET', record, 'count', online, 'at', now)
  end
  found_online, peak_before = online, peak or 'none'
  record_before = best[1] and (best[1] .. ',' .. best[2]) or 'none'
end

if entered or moved == 1 then
  announce(channel, '*')
end

if is_user and room and device ~= '' then
  -- Devices not seen within the window leave, and a user keeps at most 5,
  -- so memory and logging out stay bounded: a device past the fifth frees
  -- its place in rooms too.
  if redis.call('ZADD', devices, now, device) == 1 then
    -- (Written out here, not taken from prelude.lua: a record defines no
    -- function of rooms it calls this rarely. The keys are keys.Shard's.)
    local start = string.sub(channel, 1, #channel - #'changes')
    for _, old in ipairs(redis.call('ZRANGE', devices, 0, -6)) do
      local key = start .. 'dev:u:' .. old .. ':' .. member
      local text = redis.call('GET', key)
      if text then
        local its_kind, _, rooms = string.match(text, '^(%S+) (%S+) (.*)$')
        for room in string.gmatch(rooms, '%S+') do
          local set = start .. 'room:' .. room .. ':' .. its_kind
          if redis.call('ZREM', set, 'd:' .. old .. ' ' .. member) == 1 then
            announce(channel, room)
          end
        end
        redis.call('DEL', key)
      end
    end
    redis.call('ZREMRANGEBYRANK', devices, 0, -6)
  end
  redis.call('ZREMRANGEBYSCORE', devices, '-inf', '(' .. since)
  redis.call('EXPIRE', devices, window)
end
if is_user and room and last_seen_kept ~= '0' then
  -- A user new to the last-seen set at its cap takes the oldest's place.
  if redis.call('ZADD', last_seen, now, member) == 1
      and redis.call('ZCARD', last_seen) > most_members then
    redis.call('ZREMRANGEBYRANK', last_seen, 0, 0)
  end
  redis.call('EXPIRE', last_seen, last_seen_kept)
end
return table.concat({now, generation, entered and 1 or 0, moved, tick,
                     found_online, peak_before, record_before}, ' ')
