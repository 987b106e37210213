-- Which of some users are in a room now, visible or hidden: for skipping a
-- notification to whoever is reading the thread it is about. It only reads.
--
-- KEYS[1]  the room's users set (see room.lua)
-- KEYS[2]  the room's hidden set
--
-- ARGV[1]  the window, in seconds
-- ARGV[2..] the users' primary keys
--
-- Returns {the users among them in the room's users set within the window,
-- those in its hidden set}.

local users, hidden = KEYS[1], KEYS[2]
local window = tonumber(ARGV[1])

local t = redis.call('TIME')
local since = tonumber(t[1]) - window
local here = {{}, {}}
for i = 2, #ARGV do
  local member = ARGV[i]
  for place, set in ipairs({users, hidden}) do
    local seen = redis.call('ZSCORE', set, member)
    if seen and tonumber(seen) >= since then
      here[place][#here[place] + 1] = member
    end
  end
end
return here
