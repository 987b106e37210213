-- How many are in each of some rooms now, and the users of each whose
-- presence there lasts longest: one script for a listing's rows (the topics
-- of a forum page). It only reads.
--
-- KEYS     four keys per room, in the order of the rooms: its users, hidden,
--          guests and bots sets (member -> present until; see places.lua)
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
  local counts = {}
  for k = 0, 3 do
    counts[k + 1] = redis.call('ZCOUNT', KEYS[first + k], after, '+inf')
  end
  local users = {}
  if listed > 0 then
    users = redis.call('ZREVRANGEBYSCORE', KEYS[first], '+inf', after,
                       'WITHSCORES', 'LIMIT', 0, listed)
  end
  local hidden = {}
  if hidden_listed > 0 then
    hidden = redis.call('ZREVRANGEBYSCORE', KEYS[first + 1], '+inf', after,
                        'WITHSCORES', 'LIMIT', 0, hidden_listed)
  end
  rooms[#rooms + 1] = {counts, users, hidden}
end
return {now, rooms}
