-- Removes members whose presence ran out from some rooms' sets, and keeps
-- the rooms' sizes true.
--
-- KEYS[1]  a budget's rooms index (see prelude.lua)
-- KEYS[2]  its room sizes
-- KEYS[3]  its room members
-- KEYS[4..] each room's users, hidden, guests and bots sets (member ->
--          present until), in the order of the rooms in ARGV
--
-- ARGV[1]  '1' to only count the stale members
-- ARGV[2..] the room names (at most a hundred)
--
-- A room left empty leaves the index.
--
-- Returns, for each room, how many members were (or, counting, would be)
-- removed from each of its four sets, and 1 if it left the index, else 0.

local index, sizes, members_key = KEYS[1], KEYS[2], KEYS[3]
local counting = ARGV[1] == '1'
-- Room r's four sets (users, hidden, guests, bots) are KEYS[4 * r + k].
local function set_of(r, k)
  return KEYS[4 * r + 3 + k]
end

local _, stale_before = clock()
local removed = {}
for r = 2, #ARGV do
  local room, size = ARGV[r], 0
  for k = 1, 4 do
    local set = set_of(r - 2, k)
    local stale
    if counting then
      stale = redis.call('ZCOUNT', set, '-inf', stale_before)
    else
      stale = redis.call('ZREMRANGEBYSCORE', set, '-inf', stale_before)
      size = size + redis.call('ZCARD', set)
    end
    removed[#removed + 1] = stale
  end
  if not counting then
    local held = tonumber(redis.call('ZSCORE', sizes, room) or '0')
    redis.call('INCRBY', members_key, size - held)
    if size == 0 then
      removed[#removed + 1] = redis.call('ZREM', index, room)
      redis.call('ZREM', sizes, room)
    else
      redis.call('ZADD', sizes, size, room)
    end
  end
  if #removed % 5 ~= 0 then
    removed[#removed + 1] = 0
  end
end
return removed
