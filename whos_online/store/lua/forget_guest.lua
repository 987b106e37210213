-- A guest logged in: they leave the guests and every room they were in, and
-- today's figure counts them as the user they are. Their address stays in
-- today's guests (a HyperLogLog cannot forget a member), so it joins today's
-- logins, which are taken off; someone else at that address who is recorded
-- as a guest again (an office behind one address) leaves the logins and
-- counts once more.
--
-- KEYS[1]  the guests set
-- KEYS[2]  today's logins: a set of the addresses (as stored) of guests who
--          logged in and were not seen as guests since
-- KEYS[3]  the start of the shard's keys, "{tag}:": the rooms' keys are
--          named from it (prelude.lua)
-- KEYS[4]  the guest's places (see places.lua)
--
-- ARGV[1]  the guest, as stored
-- ARGV[2]  the most members a set keeps
--
-- Returns nothing.

local guests, logins, start, places = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local guest, most_members = ARGV[1], tonumber(ARGV[2])

if redis.call('ZREM', guests, guest) == 1 then
  announce(changes_channel(start), '*')
end
leave_everywhere(start, 'guests', guest, places)
if redis.call('SCARD', logins) < most_members then
  redis.call('SADD', logins, guest)
  redis.call('EXPIRE', logins, 172800)
end
