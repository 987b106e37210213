-- Which of some users are in a room now, visible or hidden: for skipping a
-- notification to whoever is reading the thread it is about. It only reads.
--
-- KEYS[1]  the room's users set (place -> present until; see places.lua)
-- KEYS[2]  the room's hidden set
--
-- ARGV[1..] the users' primary keys
--
-- Returns {the users among them present in the room's users set now, those
-- in its hidden set}.

local _, now = clock()
local after = '(' .. now
local here = {{}, {}}
for place, set in ipairs({KEYS[1], KEYS[2]}) do
  local _, _, seen = present(set, after, 0)
  for i = 1, #ARGV do
    if seen[ARGV[i]] then
      here[place][#here[place] + 1] = ARGV[i]
    end
  end
end
return here
