-- A device or a tab of a member is in exactly these rooms now: the rooms of
-- the page a device opened last (a page view), or of the page a tab shows
-- (its script's pings); none, to leave (a tab closed).
--
-- KEYS[1]  the start of the shard's keys, "{tag}:": the rooms' keys are
--          named from it (prelude.lua), keys of the same hash tag
-- KEYS[2]  the member's places (keys.Shard.places; prelude.lua's read_held)
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
-- ARGV[7]  the most places a member holds
-- ARGV[8]  '1' when the rooms need the member online (public rooms), '0'
--          for the admin's, which only staff enter
-- ARGV[9]  Redis' time in whole seconds as the caller learnt it lately
--          (Writes._renewed uses the same), or '' to ask Redis (TIME)
-- ARGV[10..] the room names
--
-- A member is in a room until the latest of their places there (they
-- count once however many they hold); a place past ARGV[7] frees the
-- member's own place that runs out first. Nothing is shared between
-- members but the rooms' sets: what a member holds bounds what they cost
-- (docs/data-model.md).
--
-- A reader moving thread to thread runs this on every page, and each Redis
-- call, each string or table made, and a reply of tables cost a script
-- about as much as the renewal ZADD it is measured against: a move is
-- GET, ZADD, EXPIRE, ZREM, SET, SPUBLISH, and a ZREMRANGEBYSCORE of those
-- whose presence ran out when a newcomer joins a room (TIME too, when the
-- caller knows no time); times are whole seconds kept as text, compared as
-- text; the reply is one string.
--
-- Returns "+" (in the rooms given) or "-" (refused: not online), then
-- " <room>" for each room the member is no longer in (a place left it, and
-- no other place of theirs holds them there).

local start, key = KEYS[1], KEYS[2]
local kind, member, place = ARGV[1], ARGV[2], ARGV[3]
local seconds, takes_over, longest = ARGV[4], ARGV[5], ARGV[6]
local entering = seconds ~= '0' and #ARGV >= 10

local now = ARGV[9]
if now == '' then
  now = redis.call('TIME')[1]
end
local text = redis.call('GET', key)

-- The hot path, a reader moving thread to thread: a device whose one place
-- is its latest page, in one room, opens a page in one room. It does what
-- the whole path below does in that case, with no table made and nothing
-- of the prelude defined.
local head = kind .. '\n' .. place .. ' '
if text and entering and #ARGV == 10 and takes_over == '' and string.find(text, head, 1, true) == 1 then
  local gap = string.find(text, ' ', #head + 1, true)
  if gap and not string.find(text, '[ \n]', gap + 1) then
    local was, room = string.sub(text, gap + 1), ARGV[10]
    local was_till = string.sub(text, #head + 1, gap - 1)
    local lapsed = #was_till < #now or (#was_till == #now and was_till <= now)
    -- Whole seconds, rounded up: a place lasts its seconds, and less than
    -- one more.
    local till = string.format("%d", now + seconds + 1)
    local set = start .. 'room:' .. room .. ':' .. kind
    redis.call('ZADD', set, 'GT', till, member)
    local changed, reply = nil, '+'
    if was ~= room or lapsed then
      redis.call('ZREMRANGEBYSCORE', set, '-inf', now)
      changed = room
    end
    redis.call('EXPIRE', set, longest)
    if was ~= room and redis.call('ZREM', start .. 'room:' .. was .. ':' .. kind, member) == 1 then
      changed, reply = changed .. ' ' .. was, '+ ' .. was
    end
    redis.call('SET', key, head .. till .. ' ' .. room, 'EX', longest)
    if changed then
      pcall(redis.call, 'SPUBLISH', start .. 'changes', changed)
    end
    return reply
  end
end

--- prelude

if not text then
  if not entering then
    return '+'
  elseif ARGV[8] == '1' and not redis.call('ZSCORE', KEYS[3], member) then
    return '-'
  end
end
local kind_held, held = read_held(text)
-- The kind the member's places and room sets are kept as: theirs now, once
-- a user whose choice changed moves there (move_kind).
local stored = kind_held or kind

local wanted = {}
if entering then
  for i = 10, #ARGV do
    wanted[ARGV[i]] = true
  end
end
-- The places kept; the rooms a place gave up (to settle), and those a
-- place that ran out was in (presence there ran out: rejoining announces).
local kept, touched, lapsed = {}, {}, {}
for _, other in ipairs(held) do
  local holder = other[1]
  if is_past(other[2], now) then
    for room in string.gmatch(other[3], '%S+') do
      touched[room], lapsed[room] = true, true
    end
  elseif holder == place then
    for room in string.gmatch(other[3], '%S+') do
      touched[room] = true
    end
  elseif holder == takes_over and entering then
    local rest = {}
    for room in string.gmatch(other[3], '%S+') do
      if wanted[room] then
        touched[room] = true
      else
        rest[#rest + 1] = room
      end
    end
    if #rest > 0 then
      kept[#kept + 1] = {holder, other[2], table.concat(rest, ' ')}
    end
  else
    kept[#kept + 1] = other
  end
end

local till = nil
if entering then
  till = string.format("%d", now + seconds + 1)  -- as on the hot path
  kept[#kept + 1] = {place, till, table.concat(ARGV, ' ', 10)}
end

-- Past the most places a member holds (a room of a device's latest page or
-- of a tab), those that run out first go (of those that run out in the
-- same second, the oldest), room by room.
local most, count = tonumber(ARGV[7]), 0
for i, kept_place in ipairs(kept) do
  kept_place[4] = i
  for _ in string.gmatch(kept_place[3], '%S+') do
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
    local rooms = {}
    for room in string.gmatch(last[3], '%S+') do
      rooms[#rooms + 1] = room
    end
    while #rooms > 0 and count > most do
      local room = table.remove(rooms)
      touched[room] = true
      if last[1] == place then
        wanted[room] = nil
      end
      count = count - 1
    end
    if #rooms == 0 then
      kept[#kept] = nil
    else
      last[3] = table.concat(rooms, ' ')
    end
  end
end

local changed = {}
if entering then
  if stored ~= kind then
    move_kind(start, member, key, kind, longest)
    stored = kind
  end
  for i = 10, #ARGV do
    local room = ARGV[i]
    if wanted[room] then
      local set = room_set(start, room, kind)
      local added
      if touched[room] then  -- a place given up here: the latest left says
        added = redis.call('ZADD', set, latest_in(kept, room), member)
      else
        added = redis.call('ZADD', set, 'GT', till, member)
      end
      if added == 1 or lapsed[room] or not text then
        redis.call('ZREMRANGEBYSCORE', set, '-inf', now)
        changed[#changed + 1] = room
      end
      redis.call('EXPIRE', set, longest)
    end
  end
end

local reply = '+'
for room in pairs(touched) do
  if not wanted[room] and settle(start, stored, member, kept, room) then
    changed[#changed + 1] = room
    reply = reply .. ' ' .. room
  end
end
write_held(key, stored, kept, longest)
if #changed > 0 then
  pcall(redis.call, 'SPUBLISH', start .. 'changes', table.concat(changed, ' '))
end
return reply
