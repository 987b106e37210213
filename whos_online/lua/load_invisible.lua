-- Loads the invisible set from the database's answer (after Redis lost it).
--
-- KEYS[1]  the invisible set (see record.lua)
--
-- ARGV     the primary keys of the users who chose to appear offline
--
-- Returns the number of users in the set.

redis.call('SADD', KEYS[1], '', unpack(ARGV))
return redis.call('SCARD', KEYS[1]) - 1
