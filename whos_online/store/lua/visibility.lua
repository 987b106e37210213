-- A user chose to appear offline (or online again): move them between the
-- visible and hidden sets of the site at once. The database keeps the
-- choice; Redis keeps no copy of it.
--
-- KEYS[1]  the users set
-- KEYS[2]  the hidden set
-- KEYS[3]  the start of the shard's keys, "{tag}:": its changes channel and
--          the user's places are named from it (prelude.lua); a move is
--          announced as '*'
--
-- ARGV[1]  the user's primary key
-- ARGV[2]  '1' to appear offline, '0' to appear online
-- ARGV[3]  the window, in seconds (the expiry of the set they join)
-- ARGV[4]  how long a room's sets are kept after their last write
--
-- The user moves in each room they hold a place in too (move_kind).
-- Returns the rooms they moved in.

local users, hidden, start = KEYS[1], KEYS[2], KEYS[3]
local member, invisible, window, longest = ARGV[1], ARGV[2] == '1', ARGV[3], ARGV[4]

local from, to = users, hidden
if not invisible then
  from, to = hidden, users
end
local seen = redis.call('ZSCORE', from, member)
if seen then
  redis.call('ZREM', from, member)
  redis.call('ZADD', to, seen, member)
  redis.call('EXPIRE', to, window)
  announce(changes_channel(start), '*')
end
return move_kind(start, member, invisible and 'hidden' or 'users', longest)
