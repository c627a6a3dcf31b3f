-- LIBS: element
-- workers: the Redis server's clock and a queue's workers (worker_beat.lua),
-- latest beat first, each with its record.
-- KEYS: 1 worker records of the queue (delayq_workers:{N}),
--       2 worker beats of the queue (delayq_worker_beats:{N})
-- ARGV: 1 most returned
-- Returns {now_ms, id_1, beat_ms_1, record_1, ...} (a record is false when
-- its hash entry is gone). Reads only. Cost: at most ARGV[1] entries.
local bad = delayq_check_types(KEYS[1], 'hash', KEYS[2], 'zset')
if bad then return bad end
local out = {string.format('%d', delayq_server_ms())}
local beats = redis.call('zrevrange', KEYS[2], 0, tonumber(ARGV[1]) - 1, 'withscores')
for i = 1, #beats, 2 do
  out[#out + 1] = beats[i]
  out[#out + 1] = string.format('%d', tonumber(beats[i + 1]))
  out[#out + 1] = redis.call('hget', KEYS[1], beats[i])
end
return out
