-- LIBS: element offer request ids jobs events
-- transfer: move due elements to the destination list (Redisson's push task).
-- KEYS: 1 destination list, 2 timeout set, 3 pending list, 4 quarantine list,
--       5 due-time set and 6 due-time marker (lateness tracking, see the library),
--       7 pause flag, 8 id index, 9 the run's lane record (lib/request.lua),
--       10 events config, 11 events stream (lib/events.lua: one
--       'transferred' event per run that moves anything, with its counts),
--       12 stats hash (the 'transferred' total), 13 job records, 14 job
--       record expiry (lib/jobs.lua: an element offered with an id takes
--       its id along to the ready state)
-- ARGV: 1 now_ms (or empty: use the Redis server's clock), 2 limit,
--       3 probe: how far from either end of the pending list to look for an
--         element cheaply, 4 full scans allowed for elements found in neither
--         probe (0 in normal runs, which still scan the whole list for as
--         many elements as DELAYQ_SCAN_BUDGET list elements allow, and for
--         more while they fit in DELAYQ_SCAN_US), 5 the run's id in its lane
-- Returns {moved, quarantined, head_due_ms or nil, now_ms used, deep, due,
-- first_moved_due_ms or nil, pending count, ready count}: deep = 1 when it
-- stopped at a due element deep inside a long pending list (due = how many
-- elements are due then), so the caller can sweep instead. While the queue
-- is paused it moves nothing and returns no head: the caller waits for the
-- channel (lua/resume.lua publishes the head). A resend of a run that moved
-- anything answers what that run did (its lane record), and moves nothing.
--
-- Like Redisson's: elements move in due order; each one's payload goes to the
-- destination and the element leaves the pending list and the timeout set.
-- Unlike it: an element is looked for near the ends of the pending list
-- first (LPOS with MAXLEN), and by LREM from the head only when the list is
-- short enough to scan (DELAYQ_SCAN_BUDGET), since that costs a scan of the
-- whole list per element once the list is long and out of due order; and
-- an element no format can unpack goes to the quarantine list instead of
-- failing the script and stalling the queue.
local bad = delayq_check_types(KEYS[1], 'list', KEYS[2], 'zset', KEYS[3], 'list', KEYS[4], 'list', KEYS[5], 'zset', KEYS[8], 'hash')
if bad then return bad end
bad = delayq_jobs_check(KEYS[13], KEYS[14])
if bad then return bad end
local replayed = delayq_run_replayed(KEYS[9], ARGV[5])
if replayed then return replayed end
local events, events_bad = delayq_events_open(KEYS[10], KEYS[11])
if events_bad then return events_bad end
local now = ARGV[1]
if now == '' then
  now = tostring(delayq_server_ms())
end
if redis.call('exists', KEYS[7]) == 1 then
  return {0, 0, false, now, 0, 0, false, redis.call('zcard', KEYS[2]), redis.call('llen', KEYS[1])}
end
local probe = tonumber(ARGV[3])
local full_scans = tonumber(ARGV[4])
-- At most `limit` elements and about DELAYQ_BATCH_BYTES of them per run, so
-- large payloads do not make a run long; what is left is still due, and the
-- caller runs again at once.
local limit = tonumber(ARGV[2])
local due, bytes = {}, 0
while #due < limit and bytes < DELAYQ_BATCH_BYTES do
  local slice = redis.call('zrangebyscore', KEYS[2], '-inf', now, 'LIMIT', #due,
    delayq_next_chunk(limit - #due, #due, bytes, DELAYQ_BATCH_BYTES, limit))
  if #slice == 0 then
    break
  end
  for i = 1, #slice do
    due[#due + 1] = slice[i]
    bytes = bytes + #slice[i]
  end
end
local len = redis.call('llen', KEYS[3])
-- A short list (tens of thousands) is cheaper to scan whole for a few due
-- elements (~10-18 ns an element) than to give up and run again for them:
-- as many scans as DELAYQ_SCAN_BUDGET list elements allow, and more while a
-- worst-case scan still fits in DELAYQ_SCAN_US of the run (an LREM stops at
-- its element, on average well before the end). A steady stream of offers
-- due out of order keeps dozens of elements deep; searching them here moves
-- them at once, where leaving them to a sweep (a read of the whole list)
-- makes them wait for it.
local DELAYQ_SCAN_BUDGET = 50000
local DELAYQ_SCAN_US = 1000
if len > 0 then
  -- The scans asked for are capped too: a few, or one of a very long list
  -- (it must make progress: ~13 ms at 1,000,000 small elements).
  full_scans = math.min(full_scans, math.max(1, math.floor(4 * DELAYQ_SCAN_BUDGET / len)))
  full_scans = math.max(full_scans, math.floor(DELAYQ_SCAN_BUDGET / len))
end
local started = redis.call('time')
-- A scan walks the list's entries: ~10-15 ns each while they share cache
-- lines, ~60-75 ns once each takes its own (measured for 16-byte and 1 KB
-- payloads); the element searched for stands for the list's.
local function scan_fits(element)
  local t = redis.call('time')
  local used = (t[1] - started[1]) * 1000000 + (t[2] - started[2])
  local ns = #element < 64 and 15 or 75
  return used + len * ns / 1000 <= DELAYQ_SCAN_US
end
local moved = {}
local head_marks, tail_marks = 0, 0
local deep = 0
-- An element found by a probe is marked and the marks removed together
-- below, scanning no further than the probes did. One found by no probe is
-- removed by LREM as it is searched for: a single scan, where LPOS, a mark
-- and removing the marks would scan it twice.
for i = 1, #due do
  local element = due[i]
  if len <= 2 * probe then
    len = len - redis.call('lrem', KEYS[3], 1, element)
  else
    local pos = redis.call('lpos', KEYS[3], element, 'MAXLEN', probe)
      or redis.call('lpos', KEYS[3], element, 'RANK', -1, 'MAXLEN', probe)
    if pos then
      redis.call('lset', KEYS[3], pos, DELAYQ_TOMBSTONE)
      if pos < len / 2 then head_marks = head_marks + 1 else tail_marks = tail_marks + 1 end
    elseif full_scans > 0 or scan_fits(element) then
      full_scans = full_scans - 1
      len = len - redis.call('lrem', KEYS[3], 1, element)
    else
      deep = 1
      break
    end
  end
  -- Due but not in the pending list (left by a failed writer): moved
  -- anyway, as Redisson's transfer would.
  moved[#moved + 1] = element
end
if head_marks > 0 then redis.call('lrem', KEYS[3], head_marks, DELAYQ_TOMBSTONE) end
if tail_marks > 0 then redis.call('lrem', KEYS[3], -tail_marks, DELAYQ_TOMBSTONE) end
local first_due = #moved > 0 and redis.call('zscore', KEYS[2], moved[1])
local pushed, quarantined = delayq_deliver(KEYS[1], KEYS[2], KEYS[4], KEYS[5], KEYS[6], moved)
delayq_jobs_transferred(KEYS[13], KEYS[14], moved, delayq_ids_take(KEYS[8], moved))
delayq_ids_sweep(KEYS[8], KEYS[2])
if pushed + quarantined > 0 then
  delayq_event(events, KEYS[11], 'transferred', 'count', pushed, 'quarantined', quarantined)
  delayq_count(KEYS[12], 'transferred', pushed)
end
local head = redis.call('zrange', KEYS[2], 0, 0, 'WITHSCORES')
local due_count = 0
if deep == 1 then
  due_count = redis.call('zcount', KEYS[2], '-inf', now)
end
return delayq_run_answer(KEYS[9], ARGV[5], {pushed, quarantined, head[2] or false, now, deep, due_count,
  first_due, redis.call('zcard', KEYS[2]), redis.call('llen', KEYS[1])}, pushed + quarantined > 0)
