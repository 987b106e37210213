-- The salt for hashed guest addresses, shared by every process.
--
-- KEYS[1]  the salt key
--
-- ARGV[1]  a new random salt, set only if there is none
-- ARGV[2]  its lifetime, in seconds
--
-- Returns the salt in force.

redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', ARGV[2])
return redis.call('GET', KEYS[1])
