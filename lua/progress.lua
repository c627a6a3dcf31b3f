-- LIBS: element jobs events
-- progress: keep the progress a running job reports (JobContext::progress,
-- Delivery::progress) as lib/jobs.lua's p:<id>.
-- KEYS: 1 lease set (delayq_leases), 2 job records, 3 job record expiry,
--       4 events config, 5 events stream (lib/events.lua: 'progress' with
--       the job id, when this run writes it)
-- ARGV: 1 the delivery (8-byte id, 10-digit count, value), 2 its report's
--       sequence number (higher for each report of a delivery), 3 the
--       progress (JSON, at most DELAYQ_JOBS_PROGRESS_BYTES)
-- Returns 1 when it is kept (by this run, or already: a resend, or a later
-- report of the same delivery was kept first), 0 when the delivery is no
-- longer in flight (its lease ended: a late report of a stalled consumer
-- changes nothing), 2 when the delivery has no job (history off, or a value
-- offered without an id), 3 when the progress is too large.
-- Cost: O(log n) in the deliveries in flight.
local bad = delayq_check_types(KEYS[1], 'zset')
if bad then return bad end
bad = delayq_jobs_check(KEYS[2], KEYS[3])
if bad then return bad end
local events, events_bad = delayq_events_open(KEYS[4], KEYS[5])
if events_bad then return events_bad end
local member, seq, progress = ARGV[1], tonumber(ARGV[2]), ARGV[3]
if #progress > DELAYQ_JOBS_PROGRESS_BYTES then return 3 end
if not redis.call('zscore', KEYS[1], member) then return 0 end
if not delayq_jobs_on(KEYS[2]) then return 2 end
local delivery = delayq_jobs_hex(string.sub(member, 1, 8))
local id = redis.call('hget', KEYS[2], 'l:' .. string.sub(member, 1, 8))
if not id then return 2 end
-- The kept report's delivery and sequence: a later one of this delivery
-- (or this one, resent) stays.
local old = redis.call('hget', KEYS[2], 'p:' .. id)
if old then
  local by, at = string.match(old, '^(%x+)\31(%d+)\31')
  if by == delivery and tonumber(at) >= seq then return 1 end
end
local now = delayq_server_ms()
redis.call('hset', KEYS[2], 'p:' .. id, delivery .. '\31' .. string.format('%.0f', seq) .. '\31' .. delayq_jobs_ms(now) .. '\31' .. progress)
redis.call('zadd', KEYS[3], now + DELAYQ_JOBS_READY_TTL, 'p:' .. id)
delayq_event(events, KEYS[5], 'progress', 'delivery', delivery, 'job', id)
return 1
