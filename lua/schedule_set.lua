-- schedule_set: pause, resume or remove one schedule.
-- KEYS: 1 schedules hash
-- ARGV: 1 'pause' | 'resume' | 'remove', 2 name; for resume: 3 next_ms the
--       caller read, 4 the next occurrence from now (occurrences that passed
--       while paused are skipped)
-- Returns 0 when there is no such schedule (or, for resume, its next_ms
-- moved: the caller reads it again), else 1. Cost: one record.
local bad = delayq_check_types(KEYS[1], 'hash')
if bad then return bad end
if ARGV[1] == 'remove' then
  return redis.call('hdel', KEYS[1], ARGV[2])
end
local raw = redis.call('hget', KEYS[1], ARGV[2])
if not raw then
  return 0
end
local record = cjson.decode(raw)
if ARGV[1] == 'pause' then
  record.paused = true
elseif ARGV[1] == 'resume' then
  if not record.paused then
    return 1
  end
  if record.next_ms ~= ARGV[3] then
    return 0
  end
  record.paused = false
  record.next_ms = ARGV[4]
else
  return redis.error_reply('ERR delayq: unknown schedule operation ' .. ARGV[1])
end
redis.call('hset', KEYS[1], ARGV[2], cjson.encode(record))
return 1
