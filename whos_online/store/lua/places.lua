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
-- Each Redis call a script makes costs a few µs however little it does, and
-- a reader moving thread to thread runs this on every page: the member's
-- places are read once, a room new to its budget is emptied with one DEL,
-- and the budgets' counts, their keys' lives and the announcements are
-- written once, at the end.
--
-- Returns {now as "seconds.micros", the rooms entered, the rooms the
-- member is no longer in (a place left them, and no other place of theirs
-- holds them there)}; a room refused because its budget is full is not
-- among those entered.

-- The budgets this script joined rooms of, index -> {sizes, members,
-- seconds they are kept at least}: their keys' lives are extended together,
-- once, at the end (write_budgets).
local budgets_kept = {}
-- Seconds a budget's keys are kept beyond what its rooms need, so that a
-- reader moving on a minute later finds them kept long enough.
local BUDGET_SLACK = 60

-- Keep ``key`` for at least ``seconds`` more.
local function keep_for(key, seconds)
  if redis.call('TTL', key) < seconds then
    redis.call('EXPIRE', key, seconds)
  end
end

-- Members whose presence in ``room`` ran out make way; how many.
local function clear_stale(start, room, now)
  local left = 0
  for _, kind in ipairs({'users', 'hidden', 'guests'}) do
    left = left + redis.call('ZREMRANGEBYSCORE', room_set(start, room, kind), '-inf', now)
  end
  freed(start, room, left)
  if left > 0 then
    announce(changes_channel(start), room)
  end
  return left
end

-- ``rooms`` leave their budget's index: their presence ran out, and their
-- sets' places are free.
local function forget_rooms(index, sizes, members, rooms)
  local held = 0
  for _, name in ipairs(rooms) do
    held = held + tonumber(redis.call('ZSCORE', sizes, name) or '0')
  end
  count_members(members, -held)
  redis.call('ZREM', index, unpack(rooms))
  redis.call('ZREM', sizes, unpack(rooms))
end

-- Rooms whose presence ran out leave their budget's index, a hundred at a
-- time.
local function forget_idle_rooms(index, sizes, members, now)
  local gone = redis.call('ZRANGE', index, '-inf', now, 'BYSCORE', 'LIMIT', 0, 100)
  if #gone > 0 then
    forget_rooms(index, sizes, members, gone)
  end
end

-- The members the budget counted by ``members`` holds now.
local function members_held(members)
  local held = tonumber(redis.call('GET', members) or '0')
  return held + (members_counted[members] or 0)
end

-- Whether the budget's rooms may take one more member: when they seem full,
-- rooms whose presence ran out leave the index first, then members whose
-- presence ran out make way (from ``room``'s sets unless it is new, then
-- from the rooms whose presence runs out first).
local function room_for_one(start, room, budget, now, most_members, is_new)
  local index, sizes, members = budget[1], budget[2], budget[3]
  if members_held(members) < most_members then
    return true
  end
  forget_idle_rooms(index, sizes, members, now)
  if not is_new then
    clear_stale(start, room, now)
  end
  if members_held(members) < most_members then
    return true
  end
  for _, name in ipairs(redis.call('ZRANGE', index, 0, 9)) do
    if name ~= room then
      clear_stale(start, name, now)
    end
  end
  return members_held(members) < most_members
end

-- Whether the budget may take ``room``, new to it: when it seems full,
-- rooms whose presence ran out leave the index first.
local function room_for_a_room(budget, now, most_rooms)
  local index = budget[1]
  if redis.call('ZCARD', index) < most_rooms then
    return true
  end
  forget_idle_rooms(index, budget[2], budget[3], now)
  return redis.call('ZCARD', index) < most_rooms
end

-- Puts ``member`` (of ``kind``) in ``room`` until ``till``; false when
-- refused. A new room is refused while ``most_rooms`` others of its budget
-- are in use, and a member new to a room while the budget's rooms hold
-- ``most_members``, once members whose presence ran out made way: newcomers
-- wait, and nobody in a room is ever pushed out. Guests get half of each
-- bound, so strangers never fill what users need.
local function join(start, kind, member, room, till, now, most_rooms, most_members)
  local index, sizes, members = budget_of(start, room)
  local budget = {index, sizes, members}
  if kind == 'guests' then
    most_rooms, most_members = math.floor(most_rooms / 2), math.floor(most_members / 2)
  end
  local target = room_set(start, room, kind)
  local latest = redis.call('ZSCORE', index, room)
  if latest and tonumber(latest) <= now then
    forget_rooms(index, sizes, members, {room})
    latest = nil
  end
  local is_new, added, moved = not latest, 0, false
  if is_new then
    if not room_for_a_room(budget, now, most_rooms) then
      return false
    end
    -- A room out of the index holds only presence that ran out (the index
    -- keeps the latest of its members'), freed with it.
    local sets = sets_of(start, room, 'users')
    sets[#sets + 1] = room_set(start, room, 'guests')
    redis.call('DEL', unpack(sets))
  end
  if is_new or not redis.call('ZSCORE', target, member) then
    if not room_for_one(start, room, budget, now, most_members, is_new) then
      return false
    end
    added = 1
  end
  if not is_new and kind ~= 'guests' then
    local other = room_set(start, room, kind == 'users' and 'hidden' or 'users')
    moved = redis.call('ZREM', other, member) == 1
    if moved then
      added = added - 1
    end
  end
  -- A renewal (already in ``target``) announces nothing.
  if added == 1 or moved then
    announce(changes_channel(start), room)
  end
  local seconds = math.ceil(till - now) + 1
  redis.call('ZADD', target, 'GT', till, member)
  redis.call('ZADD', index, 'GT', till, room)
  if added ~= 0 then
    redis.call('ZINCRBY', sizes, added, room)
    count_members(members, added)
  end
  if is_new then
    redis.call('EXPIRE', target, seconds)
  else
    keep_for(target, seconds)
  end
  local kept = budgets_kept[index] or {sizes, members, 0}
  kept[3] = math.max(kept[3], seconds)
  budgets_kept[index] = kept
  return true
end

-- The members counts held (hold_changes), each written once; the keys of
-- those just made (a budget whose keys had all gone) -> true.
local function write_members_counts()
  local made = {}
  for key, change in pairs(members_counted) do
    if change ~= 0 and redis.call('INCRBY', key, change) == change then
      made[key] = true
    end
  end
  return made
end

-- The budgets joined keep their keys as long as their rooms need, and a
-- minute more, extended together when the index would go sooner.
local function write_budgets(counts_made)
  for index, kept in pairs(budgets_kept) do
    local sizes, members, seconds = kept[1], kept[2], kept[3]
    if counts_made[members] or redis.call('TTL', index) < seconds then
      for _, key in ipairs({index, sizes, members}) do
        redis.call('EXPIRE', key, seconds + BUDGET_SLACK)
      end
    end
  end
end

local start, places = KEYS[1], KEYS[2]
local kind, member, place, seconds = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local takes_over = ARGV[5]
local most_rooms, most_members = tonumber(ARGV[6]), tonumber(ARGV[7])
local most_places = tonumber(ARGV[8])

local now, now_text = clock()
hold_changes()
local till = now + seconds
local wanted = {}
for i = 9, #ARGV do
  wanted[ARGV[i]] = true
end

-- The member's places, read once: those that ran out or that this place
-- gives up are dropped, the others kept in ``live`` (entry -> until).
local live, dropped, touched = {}, {}, {}
local held = redis.call('ZRANGE', places, 0, -1, 'WITHSCORES')
for i = 1, #held, 2 do
  local entry, score = held[i], tonumber(held[i + 1])
  local room, holder = place_of(entry)
  if score <= now then
    dropped[#dropped + 1] = entry
  elseif (holder == place and not wanted[room]) or (holder == takes_over and wanted[room]) then
    dropped[#dropped + 1] = entry
    touched[room] = true
  else
    live[entry] = score
  end
end

local entered, placed = {}, {}
for i = 9, #ARGV do
  local room = ARGV[i]
  if join(start, kind, member, room, till, now, most_rooms, most_members) then
    local entry = room .. ' ' .. place
    live[entry] = till
    placed[#placed + 1] = till
    placed[#placed + 1] = entry
    entered[#entered + 1] = room
  end
end

-- Past the most places a member holds, those that run out first go.
local kept = {}
for entry, score in pairs(live) do
  kept[#kept + 1] = {entry, score}
end
if #kept > most_places then
  table.sort(kept, function(a, b) return a[2] < b[2] end)
  for i = 1, #kept - most_places do
    local entry = kept[i][1]
    live[entry] = nil
    dropped[#dropped + 1] = entry
    touched[place_of(entry)] = true
  end
end

if #dropped > 0 then
  redis.call('ZREM', places, unpack(dropped))
end
if #placed > 0 then
  redis.call('ZADD', places, unpack(placed))
end
local left = {}
for room in pairs(touched) do
  if settle(start, kind, member, live, room) then
    left[#left + 1] = room
  end
end
if #placed > 0 then
  local last = till
  for _, score in pairs(live) do
    last = math.max(last, score)
  end
  redis.call('EXPIRE', places, math.ceil(last - now) + 1)
end
write_budgets(write_members_counts())
announce_held()
return {now_text, entered, left}
