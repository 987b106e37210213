-- The rooms anyone is in now.
--
-- KEYS[1]  a budget's rooms index (room name -> present until; see
--          prelude.lua)
--
-- Returns the room names, in no particular order.

local _, now = clock()
return redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf')
