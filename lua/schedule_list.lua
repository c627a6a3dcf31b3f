-- LIBS: element
-- schedule_list: the Redis server's clock and a queue's schedules.
-- KEYS: 1 schedules hash
-- ARGV: 1 a schedule's name, or nothing for all of them
-- Returns {now_ms, name_1, record_1, ...}. Cost: at most the 1,000 records a
-- queue may hold (schedule_save.lua).
local bad = delayq_check_types(KEYS[1], 'hash')
if bad then return bad end
local out = {string.format('%d', delayq_server_ms())}
if ARGV[1] then
  local raw = redis.call('hget', KEYS[1], ARGV[1])
  if raw then
    out[2] = ARGV[1]
    out[3] = raw
  end
  return out
end
local all = redis.call('hgetall', KEYS[1])
for i = 1, #all do
  out[#out + 1] = all[i]
end
return out
