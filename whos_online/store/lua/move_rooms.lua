-- A user's record found their choice changed (record.lua's "moved"): they
-- move between the visible and hidden sets of each room they hold a place
-- in too, keeping until when they are there.
--
-- KEYS[1]  the start of the shard's keys, "{tag}:": the user's places are
--          named from it (prelude.lua)
--
-- ARGV[1]  the user's primary key
-- ARGV[2]  the set they are in now: users or hidden
-- ARGV[3]  how long a room's sets are kept after their last write
--
-- Returns the rooms they moved in.

return move_kind(KEYS[1], ARGV[1], ARGV[2], ARGV[3])
