-- A device moved by plain commands (store/places.py: ZADD into the rooms it
-- entered, ZREM from those its guard said it was in, SET ... GET of its
-- place) found its place was not what the guard said: another tab of the
-- browser moved it meanwhile, a user's choice of kind changed, or it held
-- none. This makes Redis what places.lua would have made it.
--
-- KEYS[1]  the start of the shard's keys, "{tag}:" (prelude.lua)
-- KEYS[2]  the site's set of the member's kind
--
-- ARGV[1]  the kind the move wrote: users, hidden or guests
-- ARGV[2]  the member
-- ARGV[3]  the device
-- ARGV[4]  the device's place before, as the move replaced it (read_device),
--          or '' for none
-- ARGV[5]  '1' when the rooms need the member online (public rooms)
-- ARGV[6]  how long a room's sets and the member's places are kept
-- ARGV[7]  Redis' time in whole seconds
-- ARGV[8..] the rooms the move entered
--
-- A device that held no place, of a member who holds none elsewhere and is
-- not online, or a user's device past their fifth, is taken out of the
-- rooms it entered. Returns "+" or "-" as
-- places.lua does, then " <room>" for each room the member is no longer in.

local start, members = KEYS[1], KEYS[2]
local kind, member, device, was = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local longest, now = ARGV[6], ARGV[7]
local place = 'd:' .. device
local placed = entry(place, member)
local entered = {}
for i = 8, #ARGV do
  entered[ARGV[i]] = true
end

local removed, reply = {}, '+'
if was == '' and #ARGV >= 8 then
  local refused = not may_hold(start, kind, member, device)
  if not refused and ARGV[5] == '1' then
    local elsewhere = false
    for _, held in ipairs(places_of(start, kind, member)) do
      if held[1] ~= place then
        elsewhere = true
      end
    end
    refused = not elsewhere and not redis.call('ZSCORE', members, member)
  end
  if refused then
    for i = 8, #ARGV do
      if redis.call('ZREM', room_set(start, ARGV[i], kind), placed) == 1 then
        removed[#removed + 1] = ARGV[i]
      end
    end
    redis.call('DEL', device_key(start, kind, device, member))
    reply = '-'
  end
end
if was ~= '' then
  local its_kind, _, rooms = read_device(was)
  for room in string.gmatch(rooms, '%S+') do
    if not entered[room] or its_kind ~= kind then
      if redis.call('ZREM', room_set(start, room, its_kind), placed) == 1 then
        removed[#removed + 1] = room
      end
    end
  end
  if its_kind ~= kind then
    move_kind(start, member, kind, longest, device)
  end
end

local held, told = places_of(start, kind, member, device), {}
for _, room in ipairs(removed) do
  if not told[room] and not is_in(held, room, now) then
    told[room] = true
    reply = reply .. ' ' .. room
    announce(changes_channel(start), room)
  end
end
return reply
