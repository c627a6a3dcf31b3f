-- LIBS: element
-- schedule_fires: the Redis server's clock and one schedule's recent fires
-- (lib/schedules.lua).
-- KEYS: 1 schedule fires of the queue (delayq_schedule_fires:{N})
-- ARGV: 1 the schedule's name
-- Returns {now_ms, fires JSON or false}. Reads only. Cost: one field of at
-- most 20 entries.
local bad = delayq_check_types(KEYS[1], 'hash')
if bad then return bad end
return {string.format('%d', delayq_server_ms()), redis.call('hget', KEYS[1], ARGV[1])}
