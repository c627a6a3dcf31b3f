-- LIBS: element
-- schedule_runners: the Redis server's clock and the runners of a queue's
-- schedules that beat lately (schedule_beat.lua), latest first.
-- KEYS: 1 schedule runners of the queue (delayq_schedule_runners:{N})
-- ARGV: 1 a beat older than this (ms) is a dead runner's, 2 most returned
-- Returns {now_ms, id_1, beat_ms_1, ...}. Reads only. Cost: at most ARGV[2]
-- entries.
local bad = delayq_check_types(KEYS[1], 'zset')
if bad then return bad end
local now = delayq_server_ms()
local out = {string.format('%d', now)}
local live = redis.call('zrevrangebyscore', KEYS[1], '+inf', string.format('%d', now - tonumber(ARGV[1])),
  'withscores', 'limit', 0, tonumber(ARGV[2]))
for i = 1, #live, 2 do
  out[#out + 1] = live[i]
  out[#out + 1] = string.format('%d', tonumber(live[i + 1]))
end
return out
