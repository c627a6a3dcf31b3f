-- LIBS: element offer request jobs events priority
-- dead_letter_act: requeue or delete single dead letters, each named by the
-- index it was seen at and its digest (lua/dead_letter_page.lua), all or
-- none (ReliableQueue::requeue_dead_letters_exact, delete_dead_letters_exact).
-- Values leave the list's head meanwhile (requeues, deletes), so a value is
-- looked for at its index and, failing that, up to ARGV[2] below it (never
-- above: nothing is inserted before a dead letter). Of equal values, each
-- name takes one, the nearest to its index not taken by another.
-- KEYS: 1 dead-letter list, 2 dead-letter reasons (aligned with its tail),
--       3 destination list (the queue), 4 job records, 5 job record expiry
--       (lib/jobs.lua: a requeued job is ready again, a deleted one's
--       history expires), 6 priority ready set, 7 priority marker
--       (lib/priority.lua: a value dead-lettered with headers is requeued
--       to the ready set's tail at the default level, with them), 8
--       request key (lib/request.lua: a resend answers as the first run
--       did and changes nothing twice)
-- ARGV: 1 'requeue' or 'delete', 2 window, 3 reach (the farthest from
--       either end a value may be removed), then index, byte length,
--       digest per value (at most 100)
-- Returns {'done', index found, ...} in the order named; {'missing', index
-- as named, ...}: those not found, nothing changed; {'far', index,
-- distance}: one too deep in the list to remove in a bounded run;
-- {'budget', bytes}: the values looked at passed that many bytes, nothing
-- changed.
-- Cost: each index of the names' windows is read (LRANGE, with its reason)
-- and hashed at most once, at most 2 MiB of values in all (the client names
-- at most 1 MiB); then an LSET per value; then two LREMs on each list, each stopping within ARGV[3] of its
-- end. Every seek starts at the nearer end.
local replayed = delayq_replayed(KEYS[8])
if replayed then return replayed end
local bad = delayq_check_types(KEYS[1], 'list', KEYS[2], 'list', KEYS[3], 'list')
if bad then return bad end
bad = delayq_jobs_check(KEYS[4], KEYS[5])
if bad then return bad end
bad = delayq_check_types(KEYS[6], 'zset', KEYS[7], 'string')
if bad then return bad end

local function dead_digest(value, reason)
  return redis.sha1hex(value .. '\n' .. (reason or ''))
end

local mode, window, reach = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local named = (#ARGV - 3) / 3
if named > 100 then
  return redis.error_reply('ERR dead_letter_act names at most 100 values')
end
local n = redis.call('llen', KEYS[1])
local offset = n - redis.call('llen', KEYS[2])

-- An index as Redis is given it: counted from the tail (negative) in the
-- list's second half, so that every seek starts at the nearer end.
local function near(j)
  if j >= n / 2 then
    return j - n
  end
  return j
end

-- The same for index r of the reasons list, which ends where the values
-- list does (its value is at r + offset; from the tail, both are the same).
local function rnear(r)
  if r + offset >= n / 2 then
    return r + offset - n
  end
  return r
end

-- The reason of the dead letter at j, given the reasons read from index
-- rfrom of the reasons list.
local function reason_at(reasons, rfrom, j)
  if j - offset < 0 then
    return false
  end
  return reasons[j - offset - rfrom + 1] or false
end

-- Values, reasons and digests read so far, by index: each index is read
-- and hashed once per call, however many names' windows hold it, and the
-- bytes read are capped (BUDGET): past it the call changes nothing and
-- answers 'budget' (name fewer values at once).
local BUDGET = 2 * 1024 * 1024
local read_bytes = 0
local values_at, reasons_at, digests_at = {}, {}, {}

-- Reads indices lo..hi (none read yet) into the cache.
local function fill(lo, hi)
  local values = redis.call('lrange', KEYS[1], near(lo), near(hi))
  local rfrom = math.max(lo - offset, 0)
  local reasons = {}
  if hi - offset >= 0 then
    reasons = redis.call('lrange', KEYS[2], rnear(rfrom), rnear(hi - offset))
  end
  for j = lo, hi do
    local value = values[j - lo + 1] or false
    values_at[j] = value
    if value then
      reasons_at[j] = reason_at(reasons, rfrom, j)
      -- A record holds up to 8 KiB of headers: counted with its value.
      read_bytes = read_bytes + #value + (reasons_at[j] and #reasons_at[j] or 0)
    end
  end
end

-- Looks for one value among indices lo..hi, from hi down; returns its
-- index and bytes, or nil and 'budget' once the cap is passed.
local taken = {}
local function look(lo, hi, len, digest)
  local j = hi
  while j >= lo do
    if values_at[j] == nil then
      local k = j
      while k > lo and values_at[k - 1] == nil do
        k = k - 1
      end
      fill(k, j)
      if read_bytes > BUDGET then
        return nil, 'budget'
      end
    end
    local value = values_at[j]
    if value and not taken[j] and #value == len then
      local d = digests_at[j]
      if not d then
        d = dead_digest(value, reasons_at[j])
        digests_at[j] = d
      end
      if d == digest then
        return j, value
      end
    end
    j = j - 1
  end
  return nil
end

local found, missing = {}, {}
for i = 1, named do
  local index, len, digest = tonumber(ARGV[3 * i + 1]), tonumber(ARGV[3 * i + 2]), ARGV[3 * i + 3]
  local hi = math.min(index, n - 1)
  -- Where it was seen first (the usual case: nothing moved), then below.
  local j, value = look(hi, hi, len, digest)
  if not j and value ~= 'budget' then
    j, value = look(math.max(index - window, 0), hi - 1, len, digest)
  end
  if value == 'budget' then
    return delayq_answer(KEYS[8], {'budget', BUDGET})
  end
  if j then
    taken[j] = true
    found[#found + 1] = {j, value, reasons_at[j]}
  else
    missing[#missing + 1] = index
  end
end
if #missing > 0 then
  table.insert(missing, 1, 'missing')
  return delayq_answer(KEYS[8], missing)
end
for _, at in ipairs(found) do
  local distance = math.min(at[1], n - 1 - at[1])
  if distance > reach then
    return delayq_answer(KEYS[8], {'far', at[1], distance})
  end
end

local answer = {'done'}
for i, at in ipairs(found) do
  answer[i + 1] = at[1]
end
-- In list order: requeued values keep their order at the queue's tail.
table.sort(found, function(a, b) return a[1] < b[1] end)
-- A mark no value can equal (the request key is this call's own), set in
-- place of each value and then removed by two LREMs, one from each end:
-- those in the list's first half from its head, the rest from its tail.
local mark = '\0delayq_removed\0' .. KEYS[8]
local head, tail, rhead, rtail = 0, 0, 0, 0
-- Requeued first, each where it goes (the ready set with its headers, or
-- the list), before any dead letter is marked for removal.
if mode == 'requeue' then
  local with_headers, headers = {}, {}
  for _, at in ipairs(found) do
    local kept = at[3] and delayq_dead_record_headers(at[3])
    if kept then
      with_headers[#with_headers + 1] = at[2]
      headers[#with_headers] = kept
    else
      redis.call('rpush', KEYS[3], at[2])
    end
  end
  delayq_priority_requeue(KEYS[6], KEYS[7], with_headers, headers)
end
for _, at in ipairs(found) do
  local j = at[1]
  redis.call('lset', KEYS[1], near(j), mark)
  local near_head = j < n / 2
  if near_head then head = head + 1 else tail = tail + 1 end
  if j - offset >= 0 then
    redis.call('lset', KEYS[2], rnear(j - offset), mark)
    if near_head then rhead = rhead + 1 else rtail = rtail + 1 end
  end
end
if delayq_jobs_on(KEYS[4]) then
  local records, values = {}, {}
  for i, at in ipairs(found) do
    records[i], values[i] = at[3] or '', at[2]
  end
  delayq_jobs_from_dead(KEYS[4], KEYS[5], records, mode == 'requeue' and values or nil, delayq_server_ms())
end
-- LREM's count 0 would mean all: only counts above 0 are sent.
if head > 0 then redis.call('lrem', KEYS[1], head, mark) end
if tail > 0 then redis.call('lrem', KEYS[1], -tail, mark) end
if rhead > 0 then redis.call('lrem', KEYS[2], rhead, mark) end
if rtail > 0 then redis.call('lrem', KEYS[2], -rtail, mark) end
return delayq_answer(KEYS[8], answer)
