-- A device or a tab of a member is in exactly these rooms now: the rooms of
-- the page a device opened last (a page view), or of the page a tab shows
-- (its script's pings); none, to leave (a tab closed).
--
-- A device moving from rooms its guard names to others does not come here:
-- store/places.py moves it with plain commands, and comes here only when
-- its guard knows no rooms, or Redis held other than the guard said.
--
-- KEYS[1]  the start of the shard's keys, "{tag}:": the rooms' keys and
--          the member's places are named from it (prelude.lua)
-- KEYS[2]  the member's tabs (keys.Shard.tabs)
-- KEYS[3]  the site's set of the member's kind: a member holds no place
--          in a public room unless they are in it (admitted online)
--
-- ARGV[1]  the kind: users, hidden or guests (crawlers are kept out of rooms)
-- ARGV[2]  the member
-- ARGV[3]  the place: "d:<device>" or "t:<tab>"
-- ARGV[4]  seconds it stays without another word (a device's: the guard
--          period; a tab's: the tab timeout); 0 to leave
-- ARGV[5]  the place it takes over in these rooms ("d:<device>" for a tab:
--          its device's places in the tab's rooms), or ''
-- ARGV[6]  seconds the longest place lasts, and one more: how long a room's
--          sets and the member's places are kept after their last write
-- ARGV[7]  the most rooms a member's tabs hold
-- ARGV[8]  '1' when the rooms need the member online (public rooms), '0'
--          for the admin's, which only staff enter
-- ARGV[9]  Redis' time in whole seconds as the caller learnt it lately
--          (StoreBase.learnt_now), or '' to ask Redis (TIME)
-- ARGV[10..] the room names
--
-- A member is in a room while any of their places there lasts (they count
-- once however many they hold). A device holds one place, a tab one; past
-- ARGV[7] rooms in tabs, the tab that runs out first frees its rooms.
-- Nothing is shared between members but the rooms' sets: what a member
-- holds bounds what they cost (docs/data-model.md).
--
-- Returns "+" (in the rooms given) or "-" (refused: not online), then
-- " <room>" for each room the member is no longer in (a place left it, and
-- no other place of theirs holds them there).

local start, tabs, members = KEYS[1], KEYS[2], KEYS[3]
local kind, member, place = ARGV[1], ARGV[2], ARGV[3]
local seconds, takes_over, longest = ARGV[4], ARGV[5], ARGV[6]
local entering = seconds ~= '0' and #ARGV >= 10
local now = ARGV[9]
if now == '' then
  now = redis.call('TIME')[1]
end

-- The hot path, a tab's ping: an open tab renews its place in the same
-- rooms. It does what the whole path below does in that case, with no table
-- made and nothing of the prelude defined.
local rooms_text = entering and table.concat(ARGV, ' ', 10)
local text = entering and string.sub(place, 1, 2) == 't:' and redis.call('GET', tabs)
if text and string.sub(text, 1, #kind + 1) == kind .. '\n' then
  local head = '\n' .. place .. ' '
  local at = string.find(text, head, 1, true)
  local gap = at and string.find(text, ' ', at + #head, true)
  local stop = gap and (string.find(text, '\n', gap, true) or #text + 1)
  local was_till = gap and string.sub(text, at + #head, gap - 1)
  if gap and string.sub(text, gap + 1, stop - 1) == rooms_text
      and (#was_till > #now or (#was_till == #now and was_till > now)) then
    local till = string.format('%d', now + seconds + 1)  -- as below
    local placed = place .. ' ' .. member
    for i = 10, #ARGV do
      local set = start .. 'room:' .. ARGV[i] .. ':' .. kind
      redis.call('ZADD', set, till, placed)
      redis.call('EXPIRE', set, longest)
    end
    local renewed = string.sub(text, 1, at + #head - 1) .. till .. string.sub(text, gap)
    redis.call('SET', tabs, renewed, 'EX', longest)
    return '+'
  end
end

--- prelude
local is_device = string.sub(place, 1, 2) == 'd:'
local device = nil
if is_device then
  device = string.sub(place, 3)
elseif takes_over ~= '' then
  device = string.sub(takes_over, 3)
end
local device_place = device and device_key(start, kind, device, member)

-- What this call reads of the member's places: their tabs, and the place of
-- the device it names (for a tab, only as it opens or comes back: it takes
-- over its device's place then); the others only where it must.
local tab_held, device_held
local function known()
  local found = {}
  local tab_kind, reads_device = nil, is_device
  tab_kind, tab_held = read_held(redis.call('GET', tabs))
  if not is_device then
    reads_device = takes_over ~= ''
    for _, held in ipairs(tab_held) do
      found[#found + 1] = {held[1], held[2], held[3], tab_kind}
      if held[1] == place and not is_past(held[2], now) then
        reads_device = false
      end
    end
  else
    for _, held in ipairs(tab_held) do
      found[#found + 1] = {held[1], held[2], held[3], tab_kind}
    end
  end
  device_held = nil
  if reads_device then
    local its_kind, till, its_rooms = read_device(redis.call('GET', device_place))
    if its_kind then
      device_held = {'d:' .. device, till, its_rooms, its_kind}
      found[#found + 1] = device_held
    end
  end
  return found
end

local places = known()
if entering and #places == 0 and ARGV[8] == '1'
    and not redis.call('ZSCORE', members, member)
    and #places_of(start, kind, member) == 0 then
  return '-'
end
if entering and is_device and not may_hold(start, kind, member, device) then
  return '-'
end
for _, held in ipairs(places) do
  if held[4] ~= kind then  -- a user whose choice changed: their places too
    move_kind(start, member, kind, longest, device)
    places = known()
    break
  end
end

local wanted, rooms = {}, {}
if entering then
  for i = 10, #ARGV do
    wanted[ARGV[i]] = true
    rooms[#rooms + 1] = ARGV[i]
  end
end
local placed = entry(place, member)
local till = string.format('%d', now + seconds + 1)  -- less than one more
local removed, changed = {}, {}

-- What this place held and no longer will, and what it lapsed from.
local before, lapsed = '', false
for _, held in ipairs(places) do
  if held[1] == place then
    before, lapsed = held[3], is_past(held[2], now)
  end
end
for room in string.gmatch(before, '%S+') do
  if not wanted[room] and redis.call('ZREM', room_set(start, room, kind), placed) == 1 then
    removed[#removed + 1] = room
  end
end

for _, room in ipairs(rooms) do
  local set = room_set(start, room, kind)
  local was_in = is_in(places, room, now)
  if redis.call('ZADD', set, till, placed) == 1 or lapsed then
    redis.call('ZREMRANGEBYSCORE', set, '-inf', now)
    if not was_in or lapsed then
      changed[#changed + 1] = room
    end
  end
  redis.call('EXPIRE', set, longest)
end

-- A tab takes over its device's place in the tab's rooms.
if entering and takes_over ~= '' and device_held then
  local its_till, its_rooms, its_kind = device_held[2], device_held[3], device_held[4]
  local rest, dropped = {}, false
  local its_entry = entry(takes_over, member)
  for room in string.gmatch(its_rooms, '%S+') do
    if wanted[room] then
      redis.call('ZREM', room_set(start, room, its_kind), its_entry)
      dropped = true
    else
      rest[#rest + 1] = room
    end
  end
  if dropped and #rest == 0 then
    redis.call('DEL', device_place)
  elseif dropped then
    local kept = its_kind .. ' ' .. its_till .. ' ' .. table.concat(rest, ' ')
    redis.call('SET', device_place, kept, 'KEEPTTL')
  end
end

if is_device then
  local key = device_place
  if entering then
    redis.call('SET', key, kind .. ' ' .. till .. ' ' .. table.concat(rooms, ' '), 'EX', longest)
  else
    redis.call('DEL', key)
  end
else
  -- The tabs kept: those still present but this one, then this one; past
  -- the most rooms a member's tabs hold, those that run out first go (of
  -- those that run out in the same second, the oldest), room by room.
  local kept = {}
  for _, other in ipairs(tab_held) do
    if other[1] ~= place and not is_past(other[2], now) then
      kept[#kept + 1] = other
    elseif other[1] ~= place then
      for room in string.gmatch(other[3], '%S+') do
        if redis.call('ZREM', room_set(start, room, kind), entry(other[1], member)) == 1 then
          removed[#removed + 1] = room
        end
      end
    end
  end
  if entering then
    kept[#kept + 1] = {place, till, table.concat(rooms, ' ')}
  end
  local most, count = tonumber(ARGV[7]), 0
  for i, tab in ipairs(kept) do
    tab[4] = i
    for _ in string.gmatch(tab[3], '%S+') do
      count = count + 1
    end
  end
  if count > most then
    table.sort(kept, function(a, b)
      if a[2] == b[2] then
        return a[4] > b[4]
      end
      return not is_past(a[2], b[2])
    end)
    while count > most do
      local last = kept[#kept]
      local its = {}
      for room in string.gmatch(last[3], '%S+') do
        its[#its + 1] = room
      end
      while #its > 0 and count > most do
        local room = table.remove(its)
        if redis.call('ZREM', room_set(start, room, kind), entry(last[1], member)) == 1 then
          removed[#removed + 1] = room
        end
        count = count - 1
      end
      if #its == 0 then
        kept[#kept] = nil
      else
        last[3] = table.concat(its, ' ')
      end
    end
  end
  write_held(tabs, kind, kept, longest)
end

local reply = '+'
if #removed > 0 then
  local now_held = places_of(start, kind, member, device)
  local told = {}
  for _, room in ipairs(removed) do
    if not told[room] and not is_in(now_held, room, now) then
      told[room] = true
      changed[#changed + 1] = room
      reply = reply .. ' ' .. room
    end
  end
end
if #changed > 0 then
  pcall(redis.call, 'SPUBLISH', start .. 'changes', table.concat(changed, ' '))
end
return reply
