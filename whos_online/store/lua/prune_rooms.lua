-- Removes members whose presence ran out from some rooms' sets: those a
-- newcomer to the room has not cleared yet (places.lua), in a room whose
-- keys have not expired yet.
--
-- KEYS     four keys per room, in the order of the rooms: its users,
--          hidden, guests and bots sets (member -> present until)
--
-- ARGV[1]  '1' to only count the stale members
-- ARGV[2..] the room names (at most a hundred)
--
-- Returns, for each room, how many members were (or, counting, would be)
-- removed from each of its four sets.

local counting = ARGV[1] == '1'
local _, now = clock()
local removed = {}
for i = 1, #KEYS do
  if counting then
    removed[i] = redis.call('ZCOUNT', KEYS[i], '-inf', now)
  else
    removed[i] = redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now)
  end
end
return removed
