-- A user leaves some rooms at once (the admin form they had open is closed):
-- the places they held there are free, and their rooms set forgets them.
--
-- KEYS[1]  the room sizes (see room.lua)
-- KEYS[2]  the room members (see room.lua)
-- KEYS[3]  the user's rooms set (see room.lua)
-- KEYS[4]  the start of the shard's keys, "{tag}:": the rooms' sets are named
--          from it ("{tag}:room:NAME:KIND"), keys of the same hash tag
--
-- ARGV[1]  the user's primary key
-- ARGV[2..] the room names
--
-- Returns how many of those rooms they were in.

local sizes, members_key, rooms_of, prefix = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local member = ARGV[1]

local was_in = 0
for i = 2, #ARGV do
  local room = ARGV[i]
  local visible = prefix .. 'room:' .. room .. ':users'
  local hidden = prefix .. 'room:' .. room .. ':hidden'
  local left = redis.call('ZREM', visible, member) + redis.call('ZREM', hidden, member)
  redis.call('ZREM', rooms_of, room)
  if left > 0 then
    was_in = was_in + 1
    redis.call('ZINCRBY', sizes, -left, room)
    redis.call('DECRBY', members_key, left)
  end
end
return was_in
