-- LIBS: element
-- worker_beat: a running worker says it is alive and what it is doing, or,
-- as it stops, that it is gone.
-- KEYS: 1 worker records of the queue (delayq_workers:{N}, a hash: worker id ->
--       its JSON record as of its last beat),
--       2 worker beats of the queue (delayq_worker_beats:{N}, a sorted set:
--       worker id -> its last beat, ms on the Redis server's clock)
-- ARGV: 1 worker id, 2 'beat' | 'leave', 3 the record (JSON; 'beat' only),
--       4 a beat older than this (ms) is forgotten, 5 most workers kept
-- Returns the Redis server's clock (ms), whatever it found: a resend beats
-- again (a later time, as harmless as the next beat) or leaves again.
--
-- Each beat forgets at most 16 workers whose last beat is older than ARGV[4]
-- and, past ARGV[5] workers, the ones that beat least lately (at most 16),
-- then lets both keys expire ARGV[4] after the last beat, so a queue no
-- worker runs loses them. Cost: at most 32 entries dropped and one written.
local bad = delayq_check_types(KEYS[1], 'hash', KEYS[2], 'zset')
if bad then return bad end
local now = delayq_server_ms()
local function forget(ids)
  for _, id in ipairs(ids) do
    redis.call('zrem', KEYS[2], id)
    redis.call('hdel', KEYS[1], id)
  end
end
if ARGV[2] == 'leave' then
  forget({ARGV[1]})
  return now
end
if ARGV[2] ~= 'beat' then
  return redis.error_reply('ERR delayq: unknown worker operation ' .. ARGV[2])
end
local keep_for = tonumber(ARGV[4])
local most = tonumber(ARGV[5])
redis.call('hset', KEYS[1], ARGV[1], ARGV[3])
redis.call('zadd', KEYS[2], now, ARGV[1])
forget(redis.call('zrangebyscore', KEYS[2], '-inf', '(' .. string.format('%d', now - keep_for), 'limit', 0, 16))
local extra = math.min(redis.call('zcard', KEYS[2]) - most, 16)
if extra > 0 then
  forget(redis.call('zrange', KEYS[2], 0, extra - 1))
end
redis.call('pexpire', KEYS[1], keep_for)
redis.call('pexpire', KEYS[2], keep_for)
return now
