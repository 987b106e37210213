-- How many are in each of some rooms, and the newest users of each: one
-- script for a listing's rows (the topics of a forum page). It only reads.
--
-- KEYS     four keys per room, in the order of the rooms: its users, hidden,
--          guests and bots sets (see room.lua)
--
-- ARGV[1]  the window, in seconds
-- ARGV[2]  how many of each room's users to list, newest first
-- ARGV[3]  how many of each room's hidden users to list, newest first
--          (absent: none)
--
-- Returns {now as "seconds.micros", for each room {{four counts}, its
-- users listed as a flat member/score list, its hidden users likewise}}.

local window, listed = tonumber(ARGV[1]), tonumber(ARGV[2])
local hidden_listed = tonumber(ARGV[3] or '0')

local t = redis.call('TIME')
local micros = string.format('%06d', tonumber(t[2]))
local now = t[1] .. '.' .. micros
local since = (tonumber(t[1]) - window) .. '.' .. micros

local rooms = {}
for first = 1, #KEYS, 4 do
  local counts = {}
  for k = 0, 3 do
    counts[k + 1] = redis.call('ZCOUNT', KEYS[first + k], since, '+inf')
  end
  local users = {}
  if listed > 0 then
    users = redis.call('ZREVRANGEBYSCORE', KEYS[first], '+inf', since,
                       'WITHSCORES', 'LIMIT', 0, listed)
  end
  local hidden = {}
  if hidden_listed > 0 then
    hidden = redis.call('ZREVRANGEBYSCORE', KEYS[first + 1], '+inf', since,
                        'WITHSCORES', 'LIMIT', 0, hidden_listed)
  end
  rooms[#rooms + 1] = {counts, users, hidden}
end
return {now, rooms}
