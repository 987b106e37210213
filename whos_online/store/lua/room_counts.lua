-- How many are in each of some rooms now, and the users of each whose
-- presence there lasts longest: one script for a listing's rows (the topics
-- of a forum page). It only reads.
--
-- KEYS     four keys per room, in the order of the rooms: its users, hidden,
--          guests and bots sets (place -> present until; see places.lua;
--          each member counted once, prelude.lua's present)
--
-- ARGV[1]  how many of each room's users to list
-- ARGV[2]  how many of each room's hidden users to list (absent: none)
--
-- Returns {now as "seconds.micros", for each room {{four counts}, its
-- users listed as a flat member/present-until list, its hidden users
-- likewise}}.

local listed = tonumber(ARGV[1])
local hidden_listed = tonumber(ARGV[2] or '0')
local _, now = clock()
local after = '(' .. now

local rooms = {}
for first = 1, #KEYS, 4 do
  local counts, users, hidden = {}, {}, {}
  users, counts[1] = present(KEYS[first], after, listed)
  hidden, counts[2] = present(KEYS[first + 1], after, hidden_listed)
  for k = 2, 3 do
    _, counts[k + 1] = present(KEYS[first + k], after, 0)
  end
  rooms[#rooms + 1] = {counts, users, hidden}
end
return {now, rooms}
