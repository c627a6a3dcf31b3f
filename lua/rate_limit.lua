-- LIBS: element
-- rate_limit: one permit of a queue's shared worker rate limit (GCRA).
-- KEYS: 1 rate limiter (delayq_rate:{N}: the theoretical arrival time, µs),
--       2 the queue's pause flag (delayq_paused:{N})
-- ARGV: 1 emission interval (µs: period / limit), 2 burst tolerance (µs:
--       interval * (burst - 1)), 3 catch-up (µs, at most one interval),
--       4 'take' | 'refund', 5 and 6 (refund) the permit's `before` and
--       `after` as its take answered them
-- take answers {0, before, after} for a permit (the arrival times before
-- and after it), {1, µs} to ask again in that many µs, {2} while the queue
-- is paused (no permit). refund answers {0}.
--
-- Times are the Redis server's (TIME), so the hosts' clocks do not matter.
-- A permit is charged at the arrival time (TAT), or now if that has passed:
-- permits are spaced by the interval whoever asks, and a full bucket lets
-- `burst` through at once. An asker late by at most the catch-up (it slept
-- until its turn and woke a little after) is still charged at the TAT, so
-- timer and round-trip delays do not lower the achieved rate; after a
-- longer quiet spell the first permit is charged at its own time. So in any
-- window of length t at most burst + floor((t + catch-up) / interval)
-- permits are granted, and at most burst + floor(t / interval) in the first
-- t after a quiet spell of burst intervals + catch-up.
--
-- A refund (a worker whose take found nothing) restores the state its take
-- found, only while its permit is still the last one (the limiter holds its
-- `after`): then the state is exactly as if it had never been granted. A
-- permit refunded later, or once the key expired, is simply spent: the
-- limiter only ever errs towards fewer permits. A take sent twice could
-- grant twice: the script is sent once (a lost reply costs a permit).
-- Cost: two keys.
local bad = delayq_check_types(KEYS[1], 'string')
if bad then return bad end
local t = redis.call('time')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local catch_up = tonumber(ARGV[3])
local stored = redis.call('get', KEYS[1])

-- The state is worth keeping only until the arrival time has passed (and
-- the catch-up after it).
local function store(tat)
  local ttl_ms = math.ceil((tat - now) / 1000) + 1000
  if ttl_ms > 0 then
    redis.call('set', KEYS[1], string.format('%.0f', tat), 'PX', ttl_ms)
  else
    redis.call('del', KEYS[1])
  end
end

if ARGV[4] == 'refund' then
  if stored and stored == ARGV[6] then
    store(tonumber(ARGV[5]) or 0)
  end
  return {0}
end

if redis.call('exists', KEYS[2]) == 1 then
  return {2}
end
local tat = tonumber(stored or '0') or 0
local allowed_at = tat - tolerance
if now < allowed_at then
  return {1, math.ceil(allowed_at - now)}
end
local charged_at = tat
if now - tat > catch_up then
  charged_at = now
end
local after = charged_at + interval
store(after)
return {0, stored or '0', string.format('%.0f', after)}
