-- Announces changes made outside a script that announces its own: members
-- moved between a room's visible and hidden sets, or pruned.
--
-- KEYS[1]  the start of the shard's keys, "{tag}:": its changes channel is
--          named from it (prelude.lua)
--
-- ARGV[1..] what changed: room names, or '*' for the site's lists
--
-- Returns nothing.

local start = KEYS[1]
for i = 1, #ARGV do
  announce(changes_channel(start), ARGV[i])
end
