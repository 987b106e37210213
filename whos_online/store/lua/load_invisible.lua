-- Loads the invisible set from the database's answer (after Redis lost it),
-- a batch at a time into a scratch set of this load's own, which the last
-- batch puts in place whole: until then records treat the mirror as missing
-- and fail closed.
--
-- KEYS[1]  the invisible set (see record.lua)
-- KEYS[2]  this load's scratch set
--
-- ARGV[1]  '1' for the last batch, else '0'
-- ARGV[2..] primary keys of users who chose to appear offline (at most a
--          thousand: Lua's unpack() is bounded by its C stack)
--
-- Returns the number of users in the set once the last batch is in, else 0.

redis.call('SADD', KEYS[2], '', unpack(ARGV, 2))
if ARGV[1] ~= '1' then
  redis.call('EXPIRE', KEYS[2], 300)
  return 0
end
redis.call('RENAME', KEYS[2], KEYS[1])
redis.call('PERSIST', KEYS[1])
return redis.call('SCARD', KEYS[1]) - 1
