-- Which of some users are in a room now, visible or hidden: for skipping a
-- notification to whoever is reading the thread it is about. It only reads.
--
-- KEYS[1]  the room's users set (member -> present until; see places.lua)
-- KEYS[2]  the room's hidden set
--
-- ARGV[1..] the users' primary keys
--
-- Returns {the users among them present in the room's users set now, those
-- in its hidden set}.

local users, hidden = KEYS[1], KEYS[2]
local now = clock()
local here = {{}, {}}
for i = 1, #ARGV do
  local member = ARGV[i]
  for place, set in ipairs({users, hidden}) do
    local till = redis.call('ZSCORE', set, member)
    if till and tonumber(till) > now then
      here[place][#here[place] + 1] = member
    end
  end
end
return here
