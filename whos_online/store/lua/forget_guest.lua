-- A guest logged in: they leave the guests, and today's figure counts them
-- as the user they are (their address stays in today's guests, which
-- cannot forget a member, so it is counted among today's logins, which are
-- taken off).
--
-- KEYS[1]  the guests set
-- KEYS[2]  today's logins: a HyperLogLog of guests who logged in
--
-- ARGV[1]  the guest, as stored
--
-- Returns nothing.

redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('PFADD', KEYS[2], ARGV[1])
redis.call('EXPIRE', KEYS[2], 172800)
