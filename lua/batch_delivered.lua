-- LIBS: element events batches
-- batch_delivered: a complete batch's completion was offered to its target
-- (src/queue/reliable/batch_outbox.rs): it leaves the outbox, its data
-- goes, and its record is kept for its keep time.
-- KEYS: 1 batch records, 2 batch outbox, 3 batch expiry
-- ARGV: 1 batch id
-- Returns 1 when this run marked it delivered, 0 when it was already (a
-- resend, or another client's mover) or is not complete.
-- Cost: O(log n).
local bad = delayq_check_types(KEYS[1], 'hash', KEYS[2], 'zset', KEYS[3], 'zset')
if bad then return bad end
local bid = ARGV[1]
local r = delayq_batches_parse(redis.call('hget', KEYS[1], 'b:' .. bid))
redis.call('zrem', KEYS[2], bid)
if not r or r.s ~= 'complete' then return 0 end
local now = delayq_server_ms()
r.s = 'delivered'
redis.call('hset', KEYS[1], 'b:' .. bid, delayq_batches_text(r))
redis.call('hdel', KEYS[1], 'd:' .. bid)
redis.call('zadd', KEYS[3], now + r.keep, 'b:' .. bid)
delayq_batches_reap(KEYS[1], KEYS[3], now, 1)
return 1
