-- LIBS: element
-- schedule_beat: a schedule runner says it is alive, or, as it stops, that
-- it is gone.
-- KEYS: 1 schedule runners of the queue (delayq_schedule_runners:{N}, a sorted set:
--       runner id -> its last beat, ms on the Redis server's clock)
-- ARGV: 1 runner id, 2 'beat' | 'leave', 3 a beat older than this (ms) is a
--       dead runner's, 4 most runners kept
-- Returns 1, whatever it found: a resend beats again (a later time, as
-- harmless as the next beat) or leaves again, and answers as the first run.
--
-- Each beat drops the beats older than ARGV[3] and, past ARGV[4] runners,
-- the oldest, and lets the key expire two stale periods after the last beat,
-- so a queue no process runs loses the key. Cost: at most the ARGV[4] + 1
-- entries the set can hold (every beat keeps it at ARGV[4]).
local bad = delayq_check_types(KEYS[1], 'zset')
if bad then return bad end
if ARGV[2] == 'leave' then
  redis.call('zrem', KEYS[1], ARGV[1])
  return 1
end
if ARGV[2] ~= 'beat' then
  return redis.error_reply('ERR delayq: unknown runner operation ' .. ARGV[2])
end
local now = delayq_server_ms()
local stale = tonumber(ARGV[3])
redis.call('zadd', KEYS[1], now, ARGV[1])
redis.call('zremrangebyscore', KEYS[1], '-inf', '(' .. string.format('%d', now - stale))
local extra = redis.call('zcard', KEYS[1]) - tonumber(ARGV[4])
if extra > 0 then
  redis.call('zremrangebyrank', KEYS[1], 0, extra - 1)
end
redis.call('pexpire', KEYS[1], 2 * stale)
return 1
