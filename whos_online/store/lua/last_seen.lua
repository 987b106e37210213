-- When users were last seen: within the window, visible or hidden, and
-- beyond it, as the last-seen set keeps them.
--
-- KEYS[1]  the users set
-- KEYS[2]  the hidden set
-- KEYS[3]  the last-seen set (see record.lua)
--
-- ARGV     the users' primary keys
--
-- Returns {now as "seconds.micros", scores in KEYS[1], scores in KEYS[2],
-- scores in KEYS[3]}, each score false where the user is not in that set.

local t = redis.call('TIME')
local now = t[1] .. '.' .. string.format('%06d', tonumber(t[2]))
return {now, redis.call('ZMSCORE', KEYS[1], unpack(ARGV)),
        redis.call('ZMSCORE', KEYS[2], unpack(ARGV)),
        redis.call('ZMSCORE', KEYS[3], unpack(ARGV))}
