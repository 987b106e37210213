-- The barest move, with the keys' lives kept (a memory bound in time) and
-- both rooms announced: still no budgets, one place per member.
local start, places = KEYS[1], KEYS[2]
local kind, member, place, seconds = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1e6
local room = ARGV[9]
local before = redis.call('HGET', places, place)
if before and before ~= room then
  redis.call('ZREM', start .. 'room:' .. before .. ':' .. kind, member)
  redis.call('SPUBLISH', start .. 'changes', before)
end
local target = start .. 'room:' .. room .. ':' .. kind
redis.call('ZADD', target, now + seconds, member)
redis.call('EXPIRE', target, seconds + 1)
redis.call('HSET', places, place, room)
redis.call('EXPIRE', places, seconds + 1)
redis.call('SPUBLISH', start .. 'changes', room)
return {t[1], {room}, before and {before} or {}}
