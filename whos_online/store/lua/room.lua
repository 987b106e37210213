-- Records a visitor as in a room ("thread:42") now.
--
-- KEYS[1]  the rooms index (room name -> last visit)
-- KEYS[2]  the room sizes (room name -> members its sets hold)
-- KEYS[3]  the room members: how many members all rooms' sets hold together
-- KEYS[4]  the room's set of the member's kind (its users set for the kinds
--          users and hidden)
-- For users (the kinds users and hidden), also:
-- KEYS[5]  the room's hidden set
-- KEYS[6]  the user's rooms set (room name -> last visit)
-- KEYS[7]  the start of the shard's keys, "{tag}:": the rooms a user leaves
--          (below) are named from it, keys of the same hash tag
--
-- ARGV[1]  the kind: users, hidden, guests or bots
-- ARGV[2]  the member
-- ARGV[3]  the window, in seconds
-- ARGV[4]  the most members all rooms together hold
-- ARGV[5]  the room name
-- ARGV[6]  the most rooms in use within one window
-- ARGV[7]  the most rooms a user is kept in at once
--
-- Rooms nobody visited within the window are forgotten first (their sets
-- expired with their last visit). A new room is refused while ARGV[6] others
-- are in use, and a member new to a room while the rooms hold ARGV[4]
-- members after this room's stale members made way: newcomers wait, and
-- nobody in a room is ever pushed out. The caller says whether a user is
-- hidden (the kind hidden), as for record.lua. A user in more than ARGV[7]
-- rooms leaves those they visited longest ago, so that KEYS[6] always names
-- every room they are in, for logging out and appearing offline.
--
-- Returns now as "seconds.micros", or false when refused.

local t = redis.call('TIME')
local micros = string.format('%06d', tonumber(t[2]))
local now = t[1] .. '.' .. micros
local since = (tonumber(t[1]) - tonumber(ARGV[3])) .. '.' .. micros
local kind, member, room = ARGV[1], ARGV[2], ARGV[5]

local gone = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. since, 'LIMIT', 0, 100)
if #gone > 0 then
  local held = 0
  for _, name in ipairs(gone) do
    held = held + tonumber(redis.call('ZSCORE', KEYS[2], name) or '0')
  end
  redis.call('DECRBY', KEYS[3], held)
  redis.call('ZREM', KEYS[1], unpack(gone))
  redis.call('ZREM', KEYS[2], unpack(gone))
end
if not redis.call('ZSCORE', KEYS[1], room)
    and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[6]) then
  return false
end

local target, other = KEYS[4], nil
if kind == 'users' then
  other = KEYS[5]
elseif kind == 'hidden' then
  target, other = KEYS[5], KEYS[4]
end

local added = 0
if not redis.call('ZSCORE', target, member) then
  local stale = redis.call('ZREMRANGEBYSCORE', target, '-inf', '(' .. since)
  local held = tonumber(redis.call('GET', KEYS[3]) or '0') - stale
  if held >= tonumber(ARGV[4]) then
    if stale > 0 then
      redis.call('DECRBY', KEYS[3], stale)
      redis.call('ZINCRBY', KEYS[2], -stale, room)
    end
    return false
  end
  added = 1 - stale
end
if other and redis.call('ZREM', other, member) == 1 then
  added = added - 1
end
redis.call('ZADD', target, now, member)
redis.call('ZADD', KEYS[1], now, room)
redis.call('ZINCRBY', KEYS[2], added, room)
redis.call('INCRBY', KEYS[3], added)
for i = 1, 4 do
  redis.call('EXPIRE', KEYS[i], ARGV[3])
end

if other then
  redis.call('ZADD', KEYS[6], now, room)
  redis.call('EXPIRE', KEYS[6], ARGV[3])
  redis.call('ZREMRANGEBYSCORE', KEYS[6], '-inf', '(' .. since)
  local over = redis.call('ZCARD', KEYS[6]) - tonumber(ARGV[7])
  if over > 0 then
    for _, name in ipairs(redis.call('ZRANGE', KEYS[6], 0, over - 1)) do
      local left = 0
      for _, set in ipairs({'users', 'hidden'}) do
        left = left + redis.call('ZREM', KEYS[7] .. 'room:' .. name .. ':' .. set, member)
      end
      if left > 0 then
        redis.call('ZINCRBY', KEYS[2], -left, name)
        redis.call('DECRBY', KEYS[3], left)
      end
    end
    redis.call('ZREMRANGEBYRANK', KEYS[6], 0, over - 1)
  end
end
return now
