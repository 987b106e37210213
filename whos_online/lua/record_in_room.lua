-- Records a visitor as in a room ("thread:42") now.
--
-- KEYS[1]  the rooms index (room name -> last visit)
-- KEYS[2]  the room's set to record the member in
-- KEYS[3]  the room's set the member leaves (see record.lua), or KEYS[2]
-- KEYS[4]  the user's rooms set (room name -> last visit), or KEYS[2] for
--          guests and bots, who are not tracked across rooms
-- KEYS[5]  for users, when users may be invisible: the invisible set (see
--          record.lua); a member in it is recorded in KEYS[3] instead
--
-- ARGV[1]  the window, in seconds
-- ARGV[2]  the member
-- ARGV[3]  the most members a set keeps
-- ARGV[4]  the room name
-- ARGV[5]  the most rooms in use within one window
--
-- Returns now as "seconds.micros", or false when the room is new and the
-- index already holds ARGV[5] rooms seen within the window.

local t = redis.call('TIME')
local micros = string.format('%06d', tonumber(t[2]))
local now = t[1] .. '.' .. micros
local since = (tonumber(t[1]) - tonumber(ARGV[1])) .. '.' .. micros
local cap = tonumber(ARGV[3])

if not redis.call('ZSCORE', KEYS[1], ARGV[4]) then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. since)
  if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[5]) then
    return false
  end
end
redis.call('ZADD', KEYS[1], now, ARGV[4])
redis.call('EXPIRE', KEYS[1], ARGV[1])

local target, other = KEYS[2], KEYS[3]
if KEYS[5] and redis.call('SISMEMBER', KEYS[5], ARGV[2]) == 1 then
  target, other = KEYS[3], KEYS[2]
end
if other ~= target then
  redis.call('ZREM', other, ARGV[2])
end
redis.call('ZADD', target, now, ARGV[2])
redis.call('EXPIRE', target, ARGV[1])
local size = redis.call('ZCARD', target)
if size > cap then
  redis.call('ZREMRANGEBYRANK', target, 0, size - cap - 1)
end

if KEYS[4] ~= KEYS[2] then
  redis.call('ZADD', KEYS[4], now, ARGV[4])
  redis.call('EXPIRE', KEYS[4], ARGV[1])
  -- A user is kept in at most 100 rooms, so logging out stays bounded.
  redis.call('ZREMRANGEBYRANK', KEYS[4], 0, -101)
end
return now
