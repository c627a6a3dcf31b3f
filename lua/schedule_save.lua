-- schedule_save: add a recurring schedule to a queue, or replace its definition.
-- KEYS: 1 schedules hash (delayq_schedules:{N})
-- ARGV: 1 name, 2 definition (JSON text made by the client), 3 first
--       occurrence (ms, computed by the client from the server's clock),
--       4 most schedules a queue may hold
-- Returns {changed (0|1), record JSON}.
--
-- The same definition again (every process of a fleet saves its schedules at
-- start-up) keeps the stored record as it is: its next occurrence, its
-- paused state and its counts. Another definition replaces it and bumps
-- `rev`, so a process still firing the old one fails its compare-and-set
-- (schedule_fire.lua). Cost: one record.
local bad = delayq_check_types(KEYS[1], 'hash')
if bad then return bad end
local old = redis.call('hget', KEYS[1], ARGV[1])
if old then
  local record = cjson.decode(old)
  if record.def == ARGV[2] then
    return {0, old}
  end
  record.def = ARGV[2]
  record.rev = tostring(tonumber(record.rev) + 1)
  record.next_ms = ARGV[3]
  local encoded = cjson.encode(record)
  redis.call('hset', KEYS[1], ARGV[1], encoded)
  return {1, encoded}
end
if redis.call('hlen', KEYS[1]) >= tonumber(ARGV[4]) then
  return redis.error_reply('ERR delayq: ' .. KEYS[1] .. ' already holds ' .. ARGV[4] .. ' schedules, the most a queue may have')
end
local encoded = cjson.encode({def = ARGV[2], rev = '1', next_ms = ARGV[3], paused = false, fired = 0, missed = 0})
redis.call('hset', KEYS[1], ARGV[1], encoded)
return {1, encoded}
