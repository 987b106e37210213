-- The barest move a room set allows: the place's one room, the member out of
-- the room it left and into the one it entered. No budgets (no memory
-- bound), no expiry, no announcements, one place per member.
local start, places = KEYS[1], KEYS[2]
local kind, member, place, seconds = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1e6
local room = ARGV[9]
local before = redis.call('HGET', places, place)
if before and before ~= room then
  redis.call('ZREM', start .. 'room:' .. before .. ':' .. kind, member)
end
redis.call('ZADD', start .. 'room:' .. room .. ':' .. kind, now + seconds, member)
redis.call('HSET', places, place, room)
return {t[1], {room}, before and {before} or {}}
