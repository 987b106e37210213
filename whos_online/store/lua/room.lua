-- Records a visitor as in a room ("thread:42") now.
--
-- KEYS[1]  the rooms index (room name -> last visit)
-- KEYS[2]  the room sizes (room name -> members its sets hold)
-- KEYS[3]  the room members: how many members all rooms' sets hold together
-- KEYS[4]  the start of the shard's keys, "{tag}:": other rooms' sets are
--          named from it ("{tag}:room:NAME:KIND"), keys of the same hash tag
-- KEYS[5]  the room's set of the member's kind (its users set for the kinds
--          users and hidden)
-- For users (the kinds users and hidden), also:
-- KEYS[6]  the room's hidden set
-- KEYS[7]  the user's rooms set (room name -> last visit)
--
-- ARGV[1]  the kind: users, hidden or guests (crawlers are kept out of rooms)
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
-- members, once members who left the window made way (from this room, then
-- from the rooms visited longest ago): newcomers wait, and nobody in a room
-- is ever pushed out. Guests may open rooms, and be newcomers, only within
-- half of either bound, so strangers never fill what users need. The caller
-- says whether a user is hidden (the kind hidden), as for record.lua. A user
-- in more than ARGV[7] rooms leaves those they visited longest ago, so that
-- KEYS[7] always names every room they are in, for logging out and
-- appearing offline.
--
-- Returns now as "seconds.micros", or false when refused.

local index, sizes, members_key, prefix = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local kind, member, window = ARGV[1], ARGV[2], tonumber(ARGV[3])
local most_members, room, most_rooms = tonumber(ARGV[4]), ARGV[5], tonumber(ARGV[6])
local rooms_per_user = tonumber(ARGV[7])
local is_user = kind == 'users' or kind == 'hidden'
if not is_user then
  -- Strangers get half of each bound, so users always have the other half.
  most_members, most_rooms = math.floor(most_members / 2), math.floor(most_rooms / 2)
end

local t = redis.call('TIME')
local micros = string.format('%06d', tonumber(t[2]))
local now = t[1] .. '.' .. micros
local stale_before = '(' .. (tonumber(t[1]) - window) .. '.' .. micros

local function set_of(name, set_kind)
  return prefix .. 'room:' .. name .. ':' .. set_kind
end

-- Members who left a room's sets make way; returns how many.
local function clear_stale(name)
  local left = 0
  for _, set_kind in ipairs({'users', 'hidden', 'guests', 'bots'}) do
    left = left + redis.call('ZREMRANGEBYSCORE', set_of(name, set_kind), '-inf', stale_before)
  end
  if left > 0 then
    redis.call('ZINCRBY', sizes, -left, name)
    redis.call('DECRBY', members_key, left)
  end
  return left
end

local gone = redis.call('ZRANGEBYSCORE', index, '-inf', stale_before, 'LIMIT', 0, 100)
if #gone > 0 then
  local held = 0
  for _, name in ipairs(gone) do
    held = held + tonumber(redis.call('ZSCORE', sizes, name) or '0')
  end
  redis.call('DECRBY', members_key, held)
  redis.call('ZREM', index, unpack(gone))
  redis.call('ZREM', sizes, unpack(gone))
end
if not redis.call('ZSCORE', index, room)
    and redis.call('ZCARD', index) >= most_rooms then
  return false
end

local target, other = KEYS[5], nil
if kind == 'users' then
  other = KEYS[6]
elseif kind == 'hidden' then
  target, other = KEYS[6], KEYS[5]
end

local added = 0
if not redis.call('ZSCORE', target, member) then
  clear_stale(room)
  local held = tonumber(redis.call('GET', members_key) or '0')
  if held >= most_members then
    -- The rooms visited longest ago are the likeliest to hold members who left.
    for _, name in ipairs(redis.call('ZRANGE', index, 0, 9)) do
      if name ~= room then
        held = held - clear_stale(name)
      end
    end
    if held >= most_members then
      return false
    end
  end
  added = 1
end
if other and redis.call('ZREM', other, member) == 1 then
  added = added - 1
end
redis.call('ZADD', target, now, member)
redis.call('ZADD', index, now, room)
redis.call('ZINCRBY', sizes, added, room)
redis.call('INCRBY', members_key, added)
for _, key in ipairs({index, sizes, members_key, target}) do
  redis.call('EXPIRE', key, window)
end

if is_user then
  local rooms_of = KEYS[7]
  redis.call('ZADD', rooms_of, now, room)
  redis.call('EXPIRE', rooms_of, window)
  redis.call('ZREMRANGEBYSCORE', rooms_of, '-inf', stale_before)
  local over = redis.call('ZCARD', rooms_of) - rooms_per_user
  if over > 0 then
    for _, name in ipairs(redis.call('ZRANGE', rooms_of, 0, over - 1)) do
      local left = redis.call('ZREM', set_of(name, 'users'), member)
        + redis.call('ZREM', set_of(name, 'hidden'), member)
      if left > 0 then
        redis.call('ZINCRBY', sizes, -left, name)
        redis.call('DECRBY', members_key, left)
      end
    end
    redis.call('ZREMRANGEBYRANK', rooms_of, 0, over - 1)
  end
end
return now
