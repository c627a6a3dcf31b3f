-- LIBS: element offer request
-- schedule_save: add a recurring schedule to a queue, or replace its
-- definition; or edit one that exists.
-- KEYS: 1 schedules hash (delayq_schedules:{N}), 2 schedule revision (the queue's last
--       one given: delayq_schedule_revs:{N}), 3 schedule fires (the history
--       of a new schedule starts empty), 4 request key (lib/request.lua: a
--       resend returns the first run's answer)
-- ARGV: 1 name, 2 definition (JSON text made by the client), 3 first
--       occurrence (ms, computed by the client from the server's clock),
--       4 most schedules a queue may hold; to edit: 5 'edit', 6 the rev the
--       caller read (3 is then the next occurrence it computed from it)
-- Returns {changed (0|1), record JSON}; an edit answers {-1} when there is
-- no such schedule (it adds none) and {-2} when another definition was
-- saved since the caller read it (read again).
--
-- The same definition again (every process of a fleet saves its schedules at
-- start-up) keeps the stored record as it is: its next occurrence, its
-- paused state and its counts. Another definition, or a new record, takes a
-- new `rev`, so a process still firing the old one fails its compare-and-set
-- (schedule_fire.lua). A rev is never given twice on a queue, so a schedule
-- removed and added again under its name is never taken for the old one
-- (ABA): one more than the queue's last rev, the old record's and the
-- server's clock in ms (should the counter key be lost). Records written
-- before the counter existed have small revs (1, 2, ...), below all of
-- these. Cost: one record.
local replayed = delayq_replayed(KEYS[4])
if replayed then return replayed end
local bad = delayq_check_types(KEYS[1], 'hash', KEYS[2], 'string', KEYS[3], 'hash')
if bad then return bad end

local function new_rev(old)
  local rev = math.max((tonumber(redis.call('get', KEYS[2])) or 0) + 1, delayq_server_ms(), (tonumber(old) or 0) + 1)
  local text = string.format('%d', rev)
  redis.call('set', KEYS[2], text)
  return text
end

local old = redis.call('hget', KEYS[1], ARGV[1])
if ARGV[5] == 'edit' then
  if not old then
    return delayq_answer(KEYS[4], {-1})
  end
  if cjson.decode(old).rev ~= ARGV[6] then
    return delayq_answer(KEYS[4], {-2})
  end
end
if old then
  local record = cjson.decode(old)
  if record.def == ARGV[2] then
    return delayq_answer(KEYS[4], {0, old})
  end
  record.def = ARGV[2]
  record.rev = new_rev(record.rev)
  record.next_ms = ARGV[3]
  local encoded = cjson.encode(record)
  redis.call('hset', KEYS[1], ARGV[1], encoded)
  return delayq_answer(KEYS[4], {1, encoded})
end
if redis.call('hlen', KEYS[1]) >= tonumber(ARGV[4]) then
  return redis.error_reply('ERR delayq: ' .. KEYS[1] .. ' already holds ' .. ARGV[4] .. ' schedules, the most a queue may have')
end
local encoded = cjson.encode({def = ARGV[2], rev = new_rev(nil), next_ms = ARGV[3], paused = false, fired = 0, missed = 0})
-- A history left behind by a version whose remove did not know it.
redis.call('hdel', KEYS[3], ARGV[1])
redis.call('hset', KEYS[1], ARGV[1], encoded)
return delayq_answer(KEYS[4], {1, encoded})
