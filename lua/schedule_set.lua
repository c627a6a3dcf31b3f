-- LIBS: element offer request
-- schedule_set: pause, resume or remove one schedule.
-- KEYS: 1 schedules hash, 2 schedule fires (lib/schedules.lua: a remove
--       takes the schedule's history with it), 3 request key (lib/request.lua:
--       a resend returns the first run's answer; a resent remove would find
--       nothing)
-- ARGV: 1 'pause' | 'resume' | 'remove', 2 name; for resume: 3 next_ms and
--       4 rev the caller read, 5 the next occurrence from now (occurrences
--       that passed while paused are skipped)
-- Returns 0 when there is no such schedule (or, for resume, its next_ms or
-- rev moved: the caller reads it again), else 1. Resume compares the rev
-- too: a schedule removed and added again under the name has another one
-- (schedule_save.lua), and its next occurrence is not computed from the old
-- spec. Cost: one record.
local replayed = delayq_replayed(KEYS[3])
if replayed then return replayed end
local bad = delayq_check_types(KEYS[1], 'hash', KEYS[2], 'hash')
if bad then return bad end
if ARGV[1] == 'remove' then
  redis.call('hdel', KEYS[2], ARGV[2])
  return delayq_answer(KEYS[3], redis.call('hdel', KEYS[1], ARGV[2]))
end
local raw = redis.call('hget', KEYS[1], ARGV[2])
if not raw then
  return delayq_answer(KEYS[3], 0)
end
local record = cjson.decode(raw)
if ARGV[1] == 'pause' then
  record.paused = true
elseif ARGV[1] == 'resume' then
  if not record.paused then
    return delayq_answer(KEYS[3], 1)
  end
  if record.next_ms ~= ARGV[3] or record.rev ~= ARGV[4] then
    return delayq_answer(KEYS[3], 0)
  end
  record.paused = false
  record.next_ms = ARGV[5]
else
  return redis.error_reply('ERR delayq: unknown schedule operation ' .. ARGV[1])
end
redis.call('hset', KEYS[1], ARGV[2], cjson.encode(record))
return delayq_answer(KEYS[3], 1)
