-- LIBS: element
-- dead_letter_reasons: the reasons of the most recent dead letters, for
-- counting them by reason (ReliableQueue::dead_letter_reasons).
-- KEYS: 1 dead-letter list, 2 dead-letter reasons (aligned with its tail)
-- ARGV: 1 how many of the most recent to look at
-- Returns {dead letters in all, looked at, reason record, ...}: the records
-- of the last min(ARGV[1], list length) values, oldest first; values
-- without one (dead-lettered before reasons were recorded) are counted in
-- "looked at" only. Reads only the reasons, never the values: O(ARGV[1]).
local bad = delayq_check_types(KEYS[1], 'list', KEYS[2], 'list')
if bad then return bad end
local n = redis.call('llen', KEYS[1])
local looked = math.min(n, tonumber(ARGV[1]))
local out = {n, looked}
if looked > 0 then
  for _, record in ipairs(redis.call('lrange', KEYS[2], -looked, -1)) do
    out[#out + 1] = record
  end
end
return out
