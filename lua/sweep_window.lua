-- LIBS: element offer request ids jobs events
-- sweep_window: move the due elements found in one window of the pending list.
-- KEYS: 1 destination list, 2 timeout set, 3 pending list, 4 quarantine list,
--       5 the queue's sweep lease, 6 due-time set and 7 due-time marker (lateness
--       tracking, see the library), 8 pause flag, 9 id index, 10 the run's
--       lane record (lib/request.lua), 11 events config, 12 events stream
--       (lib/events.lua: one 'transferred' event per run that moves any),
--       13 stats hash (the 'transferred' total), 14 job records, 15 job
--       record expiry (lib/jobs.lua: an element offered with an id takes
--       its id along to the ready state)
-- ARGV: 1 cursor (index where the window starts), 2 now_ms (or empty: use
--       the Redis server's clock), 3 lease holder (the sweeping client's id),
--       4 lease ttl (ms), 5 byte budget: most bytes of elements read in this
--       run, 6 time budget (ms) for reading and marking, counted from the
--       start of the run; removing and moving what was marked adds a few ms,
--       7 most elements to move in this run, 8 most elements to read,
--       9 time (µs) to keep for removing the marks (the last run's, returned),
--       10 rest (ms): when the sweep ends, the lease is left to expire after
--         this long instead of deleted, so that no client (this one
--         included) starts another sweep of the queue meanwhile,
--       11 the run's id in its lane
-- Returns {next cursor, moved, quarantined, scanned, leased, lease ttl ms or
-- bytes read, µs the removal of marks took, µs the run took}: scanned 0 at the end of the
-- list; leased 0 when another client holds the lease, 2 while it rests after
-- a sweep (then nothing was read, and the sixth value is its ttl). A resend
-- of a run that moved anything answers what that run did (its lane record).
--
-- A backlog of due elements scattered through a long pending list (offer
-- order unlike due order) would cost Redisson one scan of the list per
-- element. A sweep reads the list once, window by window, each run one
-- atomic script: the elements of the window that are due (their own score in
-- the timeout set, read now, is at most now) are marked by index (LSET),
-- removed in one pass (LREM of the mark from the nearer end), and moved in
-- the order they were offered (they are all overdue).
--
-- Invariants, after every run:
-- - the pending list and the timeout set hold the same elements, and the
--   pending list keeps offer order (only whole elements are removed from it,
--   each together with its timeout-set entry, in the same script);
-- - no element moves before it is due: each is moved only on its own score,
--   read in this run (an element removed or changed by anyone else is simply
--   not seen as due);
-- - Java readers see consistent state: a script is atomic, and nothing of a
--   sweep but the lease (and the cursor, kept by the client) outlives a run;
-- - each run is bounded: it reads at most ARGV[5] bytes of the list (in
--   slices sized by the elements read so far) and a quarter of that of due
--   elements (in chunks of 16), stops reading at half and marking at all of
--   ARGV[6] ms since it started, less the time the removal pass is expected
--   to take (ARGV[9]: it scans the list from the nearer end to the window,
--   and deep in a long list of large elements costs more than the rest), and
--   always makes progress (it advances the cursor past what it read, or
--   removes at least one element), so a window is never read again and again;
-- - one sweep per queue across every client: the run holds the lease (KEYS[5],
--   a STRING naming the holder, expiring unless renewed by the holder's next
--   run) or does nothing; the last run of a sweep deletes it, or leaves it
--   as 'resting' for ARGV[10] ms (no holder's name: every client waits).
local bad = delayq_check_types(KEYS[1], 'list', KEYS[2], 'zset', KEYS[3], 'list', KEYS[4], 'list', KEYS[5], 'string', KEYS[6], 'zset', KEYS[9], 'hash')
if bad then return bad end
bad = delayq_jobs_check(KEYS[14], KEYS[15])
if bad then return bad end
local replayed = delayq_run_replayed(KEYS[10], ARGV[11])
if replayed then return replayed end
local events, events_bad = delayq_events_open(KEYS[11], KEYS[12])
if events_bad then return events_bad end
if redis.call('exists', KEYS[8]) == 1 then
  -- Paused: the sweep ends; the resume's publish starts transfers again.
  redis.call('del', KEYS[5])
  return {tonumber(ARGV[1]), 0, 0, 0, 1, 0, 0, 0}
end
local started = redis.call('time')
local function elapsed_us()
  local t = redis.call('time')
  return (t[1] - started[1]) * 1000000 + (t[2] - started[2])
end
local cursor = tonumber(ARGV[1])
local owner = redis.call('get', KEYS[5])
if owner and owner ~= ARGV[3] then
  return {cursor, 0, 0, 0, owner == 'resting' and 2 or 0, redis.call('pttl', KEYS[5]), 0, 0}
end
redis.call('set', KEYS[5], ARGV[3], 'PX', ARGV[4])
local now = ARGV[2]
if now == '' then
  now = tonumber(started[1]) * 1000 + math.floor(tonumber(started[2]) / 1000)
else
  now = tonumber(now)
end
local byte_budget, budget_us = tonumber(ARGV[5]), tonumber(ARGV[6]) * 1000
local most, width = tonumber(ARGV[7]), tonumber(ARGV[8])
budget_us = math.max(budget_us / 3, budget_us - tonumber(ARGV[9]))

-- Read: slices of the window, each checked against the timeout set at once,
-- keeping only the due elements (index in the window, element).
local hits = {}
local scanned, bytes = 0, 0
local slice = math.min(16, width)
-- When the due elements are few and small, they are read once and the window
-- checked against them in Lua, instead of asking the timeout set about every
-- element read (ZMSCORE, ~0.3 us an element: most of a sweep's cost when a
-- steady stream of offers keeps a few hundred due).
local due_set = nil
local now_text = tostring(now)
-- (Not in the run that finds the list's end: it reads nothing.)
local due_count = cursor < redis.call('llen', KEYS[3]) and redis.call('zcount', KEYS[2], '-inf', now_text)
if due_count and due_count <= width / 4 then
  -- Read 16 at a time, so that members larger than those read so far cost
  -- at most 16 of them; past a quarter of the byte budget, back to ZMSCORE.
  -- (The offsets cost O(n^2 / 32) skips: ~200,000 at most, ~1 ms.)
  due_set = {}
  local read, read_bytes, due_budget = 0, 0, byte_budget / 4
  while read < due_count do
    local chunk = redis.call('zrangebyscore', KEYS[2], '-inf', now_text, 'LIMIT', read, 16)
    if #chunk == 0 then
      break
    end
    for i = 1, #chunk do
      due_set[chunk[i]] = true
      read_bytes = read_bytes + #chunk[i]
    end
    read = read + #chunk
    if read_bytes > due_budget then
      due_set = nil
      break
    end
  end
end
while true do
  local part = redis.call('lrange', KEYS[3], cursor + scanned, cursor + scanned + slice - 1)
  if #part == 0 then
    break
  end
  local scores = due_set == nil and redis.call('zmscore', KEYS[2], unpack(part))
  local full = false
  for j = 1, #part do
    bytes = bytes + #part[j]
    local is_due
    if due_set then
      is_due = due_set[part[j]] == true
    else
      -- A list element missing from the set: Redis's nil is Lua's false.
      local score = scores[j] and tonumber(scores[j])
      is_due = score and score <= now
    end
    if is_due then
      hits[#hits + 1] = {scanned + j, part[j]}
      if #hits == most then
        full = true
        scanned = scanned + j
        break
      end
    end
  end
  if full then
    break
  end
  scanned = scanned + #part
  if #part < slice or scanned >= width or bytes >= byte_budget or elapsed_us() > budget_us / 2 then
    break
  end
  -- The next slice: as many elements as the bytes left hold, at the mean
  -- size so far, and no more than read so far (large elements after small
  -- ones cost at most as many as were read).
  local mean = math.max(1, bytes / scanned)
  slice = math.floor((byte_budget - bytes) / mean)
  slice = math.max(1, math.min(slice, 1000, width - scanned, scanned))
end
if scanned == 0 then
  -- Past the end of the list: the sweep is over.
  local rest = tonumber(ARGV[10])
  if rest > 0 then
    redis.call('set', KEYS[5], 'resting', 'PX', rest)
  else
    redis.call('del', KEYS[5])
  end
  return {cursor, 0, 0, 0, 1, 0, 0, elapsed_us()}
end
if #hits == 0 then
  return {cursor + scanned, 0, 0, scanned, 1, bytes, 0, elapsed_us()}
end

-- Mark: a seek per element, longer the deeper the window. Past the time
-- budget the rest of the window is left to the next run (at least the first
-- hit is marked, so every run makes progress).
local marked = #hits
for k = 1, #hits do
  redis.call('lset', KEYS[3], cursor + hits[k][1] - 1, DELAYQ_TOMBSTONE)
  if k < #hits and elapsed_us() > budget_us then
    marked = k
    scanned = hits[k + 1][1] - 1
    break
  end
end
local len = redis.call('llen', KEYS[3])
local removing = elapsed_us()
if cursor + scanned <= len - cursor then
  redis.call('lrem', KEYS[3], marked, DELAYQ_TOMBSTONE)
else
  redis.call('lrem', KEYS[3], -marked, DELAYQ_TOMBSTONE)
end
removing = elapsed_us() - removing
-- Move each element once (a list holding one twice loses both copies, as the
-- element leaves the timeout set).
local elements, seen = {}, {}
for k = 1, marked do
  local element = hits[k][2]
  if not seen[element] then
    seen[element] = true
    elements[#elements + 1] = element
  end
end
local pushed, quarantined = delayq_deliver(KEYS[1], KEYS[2], KEYS[4], KEYS[6], KEYS[7], elements)
delayq_jobs_transferred(KEYS[14], KEYS[15], elements, delayq_ids_take(KEYS[9], elements))
if pushed + quarantined > 0 then
  delayq_event(events, KEYS[12], 'transferred', 'count', pushed, 'quarantined', quarantined)
  delayq_count(KEYS[13], 'transferred', pushed)
end
return delayq_run_answer(KEYS[10], ARGV[11],
  {cursor + scanned - marked, pushed, quarantined, scanned, 1, bytes, removing, elapsed_us()},
  pushed + quarantined > 0)
