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
-- KEYS[3]  the start of the shard's keys, "{tag}:": the rooms' keys and
--          the guest's places are named from it (prelude.lua)
-- When the guest logs in as a hidden user, and arrived with the same
-- request (recorded before its view), also:
-- KEYS[4]  the site's record hash (count, at)
-- KEYS[5]  the daily peaks hash
--
-- ARGV[1]  the guest, as stored
-- ARGV[2]  the most members a set keeps
-- With KEYS[4] and KEYS[5], what the guest's arrival found (record.lua):
-- ARGV[3]  today, in days since the epoch
-- ARGV[4]  the people online with the guest
-- ARGV[5]  today's peak before, or 'none'
-- ARGV[6]  the record before as "count,at", or 'none'
--
-- A hidden user moves no figure anyone sees, their arrival included: a
-- figure the guest's arrival raised (at once, or by the minute's figures
-- it opened) is taken back to what it was, unless it moved again since.
--
-- Returns nothing.

local guests, logins, start = KEYS[1], KEYS[2], KEYS[3]
local guest, most_members = ARGV[1], tonumber(ARGV[2])

if redis.call('ZREM', guests, guest) == 1 then
  announce(changes_channel(start), '*')
end
leave_everywhere(start, 'guests', guest)
if redis.call('SCARD', logins) < most_members then
  redis.call('SADD', logins, guest)
  redis.call('EXPIRE', logins, 172800)
end
if #KEYS > 3 then
  local record, daily_peaks = KEYS[4], KEYS[5]
  local day, online = ARGV[3], tonumber(ARGV[4])
  local peak_before, record_before = ARGV[5], ARGV[6]
  local peak = redis.call('HGET', daily_peaks, day)
  if peak and tonumber(peak) == online then
    if peak_before == 'none' then
      redis.call('HDEL', daily_peaks, day)
    elseif tonumber(peak_before) < online then
      redis.call('HSET', daily_peaks, day, peak_before)
    end
  end
  if tonumber(redis.call('HGET', record, 'count') or '0') == online then
    if record_before == 'none' then
      redis.call('DEL', record)
    else
      local count, at = string.match(record_before, '^([^,]+),(.+)$')
      if tonumber(count) < online then
        redis.call('HSET', record, 'count', count, 'at', at)
      end
    end
  end
end
