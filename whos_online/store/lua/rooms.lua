-- Which of some rooms anyone is in now.
--
-- KEYS     four keys per room, in the order of the rooms: its users,
--          hidden, guests and bots sets (member -> present until; see
--          places.lua)
--
-- ARGV     the room names (at most a hundred)
--
-- Returns the names of those anyone is in.

local _, now = clock()
local after = '(' .. now
local found = {}
for r = 1, #ARGV do
  for k = 1, 4 do
    if redis.call('ZCOUNT', KEYS[4 * (r - 1) + k], after, '+inf') > 0 then
      found[#found + 1] = ARGV[r]
      break
    end
  end
end
return found
