-- How many people are online in a shard now: its users and guests seen
-- within the window (hidden users and crawlers move no figure). It only
-- reads. With several shards, a newcomer adds every shard's up, to raise the
-- site's figures at once (see peak.lua).
--
-- KEYS[1]  the users set
-- KEYS[2]  the guests set
--
-- ARGV[1]  the window, in seconds
-- ARGV[2]  the most members a set keeps
--
-- Returns the number, or false when a set is at its cap: it is counted by
-- its estimate then, which raises no figure.

local users, guests = KEYS[1], KEYS[2]
local window, most_members = tonumber(ARGV[1]), tonumber(ARGV[2])

for _, set in ipairs({users, guests}) do
  if redis.call('ZCARD', set) >= most_members then
    return false
  end
end
local t = redis.call('TIME')
local since = (tonumber(t[1]) - window) .. '.' .. string.format('%06d', tonumber(t[2]))
return redis.call('ZCOUNT', users, since, '+inf') + redis.call('ZCOUNT', guests, since, '+inf')
