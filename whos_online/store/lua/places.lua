-- A device or a tab of a member is in exactly these rooms now: the rooms of
-- the page a device opened last (a page view), or of the page a tab shows
-- (its script's pings); none, to leave (a tab closed).
--
-- KEYS[1]  the start of the shard's keys, "{tag}:": the rooms' keys are
--          named from it (prelude.lua), keys of the same hash tag
-- KEYS[2]  the member's places (see keys.Shard.places)
--
-- ARGV[1]  the kind: users, hidden or guests (crawlers are kept out of rooms)
-- ARGV[2]  the member
-- ARGV[3]  the place: "d:<device>" or "t:<tab>"
-- ARGV[4]  seconds it stays without another word (a device's: the guard
--          period; a tab's: the tab timeout)
-- ARGV[5]  the place it takes over in these rooms ("d:<device>" for a tab:
--          its device's places in the tab's rooms), or ''
-- ARGV[6]  the most rooms of a budget in use at once
-- ARGV[7]  the most members the rooms of a budget hold together
-- ARGV[8]  the most places a member holds
-- ARGV[9..] the room names
--
-- The member's presence in a room lasts until the latest of their places
-- there (they count once however many they hold); a place past ARGV[8]
-- frees the member's own place that runs out first.
--
-- Returns {now as "seconds.micros", the rooms entered, the rooms a place
-- of the member left}; a room refused because its budget is full is not
-- among those entered.

local start, places = KEYS[1], KEYS[2]
local kind, member, place, seconds = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local takes_over = ARGV[5]
local most_rooms, most_members = tonumber(ARGV[6]), tonumber(ARGV[7])
local most_places = tonumber(ARGV[8])

local now, now_text = clock()
local till = now + seconds
local wanted = {}
for i = 9, #ARGV do
  wanted[ARGV[i]] = true
end

redis.call('ZREMRANGEBYSCORE', places, '-inf', now)
local touched = {}
for _, entry in ipairs(redis.call('ZRANGE', places, 0, -1)) do
  local room, held = place_of(entry)
  if (held == place and not wanted[room]) or (held == takes_over and wanted[room]) then
    redis.call('ZREM', places, entry)
    touched[room] = true
  end
end

local entered = {}
for i = 9, #ARGV do
  local room = ARGV[i]
  if join(start, kind, member, room, till, now, most_rooms, most_members) then
    redis.call('ZADD', places, till, room .. ' ' .. place)
    entered[#entered + 1] = room
  end
end

local over = redis.call('ZCARD', places) - most_places
if over > 0 then
  for _, entry in ipairs(redis.call('ZRANGE', places, 0, over - 1)) do
    touched[place_of(entry)] = true
  end
  redis.call('ZREMRANGEBYRANK', places, 0, over - 1)
end
local left = {}
for room in pairs(touched) do
  settle(start, kind, member, places, room, now)
  left[#left + 1] = room
end
if #entered > 0 then
  keep_for(places, seconds + 1)
end
return {now_text, entered, left}
