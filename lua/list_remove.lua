-- LIBS: element offer request
-- list_remove: delete values from a plain list by payload
-- (RBlockingQueue.remove(o) / removeAll(c)).
-- KEYS: 1 list, 2 request key (lib/request.lua: a resend removes nothing twice)
-- ARGV: 1 mode: 'first' (one copy of the first value) or 'all' (every copy
--       of every value), 2.. values
-- Returns the number of values removed. Costs a scan of the list per value,
-- as Java's does.
local replayed = delayq_replayed(KEYS[2])
if replayed then return replayed end
local bad = delayq_check_types(KEYS[1], 'list')
if bad then return bad end
local removed = 0
local count = 0
if ARGV[1] == 'first' then
  count = 1
end
for i = 2, #ARGV do
  removed = removed + redis.call('lrem', KEYS[1], count, ARGV[i])
end
return delayq_answer(KEYS[2], removed)
