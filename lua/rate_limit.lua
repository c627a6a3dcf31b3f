-- rate_limit: one permit of a queue's shared worker rate limit (GCRA).
-- KEYS: 1 the limiter (delayq_rate:{N}: the theoretical arrival time, µs)
-- ARGV: 1 emission interval (µs: period / limit), 2 burst tolerance (µs:
--       interval * (burst - 1) plus a slack for late askers), 3 'take' |
--       'refund' | 'restamp'
-- Returns 0 when a permit was granted (or refunded, or restamped), else how
-- many µs to wait before asking again.
--
-- Times are the Redis server's (TIME), so the hosts' clocks do not matter.
-- A refund gives back an unused permit (a worker that found nothing to take).
-- A restamp charges a permit that waited long for a value once more, at
-- once and without waiting (later permits wait for it instead): its first
-- charge has aged out of the schedule by the time its value starts, so
-- permits held through an idle spell would otherwise let a burst through
-- when values arrive. (If it had not aged out, the second charge only makes
-- the limiter stricter.) Cost: one key.
local bad = delayq_check_types(KEYS[1], 'string')
if bad then return bad end
local t = redis.call('time')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local tat = tonumber(redis.call('get', KEYS[1]) or '0') or 0
if tat < now then
  tat = now
end
local new_tat
if ARGV[3] == 'refund' then
  new_tat = math.max(now, tat - interval)
elseif ARGV[3] == 'restamp' then
  new_tat = tat + interval
else
  local allowed_at = tat - tolerance
  if now < allowed_at then
    return math.ceil(allowed_at - now)
  end
  new_tat = tat + interval
end
-- The state is worth keeping only until the arrival time has passed.
local ttl_ms = math.ceil((new_tat - now) / 1000) + 1000
redis.call('set', KEYS[1], string.format('%.0f', new_tat), 'PX', ttl_ms)
return 0
