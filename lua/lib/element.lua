-- delayq shared Lua: prepended to every script of this crate (see src/connection/script.rs).
--
-- Redisson packs each pending value before storing it in the timeout set and
-- the pending list. Two layouts exist (src/wire/format.rs has the same rules):
--   modern (Redisson >= 3.21.1): struct 'Bc0Lc0' = 0x08, 8 id bytes, u64 LE length, payload
--   legacy (Redisson <= 3.21.0): struct 'dLc0'   = f64 LE id, u64 LE length, payload
-- An element is read in whichever layout its length field agrees with, modern
-- first, so one queue may hold both. Anything else is malformed: scripts that
-- remove elements move those to the quarantine list instead of failing, so a
-- bad element never stalls a queue.

-- The payload of a packed element and its format ('modern' or 'legacy'), or
-- nil when it is neither.
local function delayq_payload(e)
  local n = #e
  if n >= 17 and string.byte(e, 1) == 8 and struct.unpack('<I8', e, 10) == n - 17 then
    return string.sub(e, 18), 'modern'
  end
  if n >= 16 and struct.unpack('<I8', e, 9) == n - 16 then
    return string.sub(e, 17), 'legacy'
  end
  return nil
end

-- Packs a payload with the given 8 id bytes in a format.
local function delayq_pack(format, id, payload)
  local header = struct.pack('<I8', #payload)
  if format == 'modern' then
    return '\8' .. id .. header .. payload
  end
  return id .. header .. payload
end

-- A value no packed element can equal (packed elements are at least 16 bytes
-- and satisfy a length rule this one does not), used to delete by index.
local DELAYQ_TOMBSTONE = '\0delayq:tombstone\0'

-- Removes the elements at the given 0-based indices (ascending) of a list in
-- one pass: LSET marks each, one LREM sweeps the marks.
local function delayq_remove_indices(key, indices)
  if #indices == 0 then return 0 end
  for i = 1, #indices do
    redis.call('lset', key, indices[i], DELAYQ_TOMBSTONE)
  end
  return redis.call('lrem', key, #indices, DELAYQ_TOMBSTONE)
end

-- Redis does not roll back a script that fails half way, so every script that
-- writes checks its keys' types first: a WRONGTYPE then fails the script
-- before anything changed. Pairs of (key, type); returns an error reply or nil.
local function delayq_check_types(...)
  local args = {...}
  for i = 1, #args, 2 do
    local found = redis.call('type', args[i]).ok
    if found ~= 'none' and found ~= args[i + 1] then
      return redis.error_reply('WRONGTYPE ' .. args[i] .. ' holds a ' .. found .. ', not a ' .. args[i + 1])
    end
  end
  return nil
end

-- The Redis server's clock, in ms since the epoch.
local function delayq_server_ms()
  local t = redis.call('time')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- How many elements to read next so that `bytes` stays near `budget`: a
-- few at first, then as many as the average size so far says still fit (at
-- least one, at most `cap` and `left`), and never more than read so far:
-- small elements followed by large ones cost at most as many large ones as
-- small ones were read, not `cap` of them. Keeps each script's cost bounded
-- by bytes, whatever the payloads' size.
local DELAYQ_BATCH_BYTES = 1048576
local function delayq_next_chunk(left, read, bytes, budget, cap)
  if read == 0 then
    return math.min(16, left, cap)
  end
  local average = math.max(1, bytes / read)
  return math.max(1, math.min(cap, left, read, math.floor((budget - bytes) / average) + 1))
end

-- Calls a variadic command with the values of t, in chunks Lua's unpack can take.
local function delayq_call_chunked(cmd, key, t)
  for i = 1, #t, 4000 do
    redis.call(cmd, key, unpack(t, i, math.min(i + 3999, #t)))
  end
end


-- Lateness tracking, on while a delayq worker keeps the marker key alive:
-- records when each moved payload was due (its score), for the claim of a
-- reliable consumer to read. elements and payloads are parallel (payload
-- false for an element moved aside). Capped, and expires when unused.
local function delayq_track_due(due_key, marker, timeout_key, elements, payloads)
  if #elements == 0 or redis.call('exists', marker) == 0 then
    return
  end
  local args = {}
  for i = 1, #elements, 4000 do
    local scores = redis.call('zmscore', timeout_key, unpack(elements, i, math.min(i + 3999, #elements)))
    for j = 1, #scores do
      local payload = payloads[i + j - 1]
      if scores[j] and payload then
        args[#args + 1] = scores[j]
        args[#args + 1] = payload
      end
    end
  end
  delayq_call_chunked('zadd', due_key, args)
  local extra = redis.call('zcard', due_key) - 100000
  if extra > 0 then
    redis.call('zremrangebyrank', due_key, 0, extra - 1)
  end
  redis.call('pexpire', due_key, 3600000)
end

-- The last step of every transfer: elements already taken out of the pending
-- list go to the destination (their payloads pushed in order), an element no
-- format can unpack goes to the quarantine list instead, and all leave the
-- timeout set (after their due times are recorded, when tracking is on).
-- Returns payloads pushed, elements quarantined.
local function delayq_deliver(dest, timeout, quarantine, due_key, marker, elements)
  local payloads, parallel = {}, {}
  local quarantined = 0
  for i = 1, #elements do
    local payload = delayq_payload(elements[i])
    parallel[i] = payload or false
    if payload then
      payloads[#payloads + 1] = payload
    else
      redis.call('rpush', quarantine, elements[i])
      quarantined = quarantined + 1
    end
  end
  delayq_track_due(due_key, marker, timeout, elements, parallel)
  delayq_call_chunked('rpush', dest, payloads)
  delayq_call_chunked('zrem', timeout, elements)
  return #payloads, quarantined
end

-- Dead letters and why: delayq_dead_reasons:{N} is a list kept aligned with
-- the dead-letter list's tail, '<ms> <reason>' per value (values dead-lettered
-- before delayq recorded reasons have none, at the head). A value offered
-- with headers (lib/priority.lua) keeps them in its record: '\29' and the
-- member's headers part ('H', 5 digits of length, the JSON) before the
-- reason, so that a requeue offers it again with them.
local function delayq_dead_letter(dead, reasons, value, reason, headers)
  redis.call('rpush', dead, value)
  local kept = headers and ('\29' .. headers) or ''
  redis.call('rpush', reasons, delayq_server_ms() .. ' ' .. kept .. reason)
end

-- A reason record's headers part (or nil) and where the rest of its reason
-- (a job's prefix, then the text) starts. A part whose length is out of
-- bounds (2 to 8192 bytes, lib/priority.lua), that the record cannot hold,
-- or that is not a JSON object's braces is none (the record was not
-- written by delayq): its value is requeued as a plain one.
local function delayq_dead_record_headers(record)
  local at = string.find(record, ' ', 1, true)
  if not at then
    return nil, #record + 1
  end
  if string.byte(record, at + 1) ~= 29 then
    return nil, at + 1
  end
  local len = tonumber(string.match(record, '^H(%d%d%d%d%d)', at + 2) or '')
  if not len or len < 2 or len > 8192 or at + 7 + len > #record
      or string.byte(record, at + 8) ~= 123 or string.byte(record, at + 7 + len) ~= 125 then
    return nil, at + 1
  end
  return string.sub(record, at + 2, at + 7 + len), at + 8 + len
end

-- After values left the dead-letter list's head: keeps the reasons of those
-- still there (the list's last entries).
local function delayq_dead_trim(dead, reasons)
  local n = redis.call('llen', dead)
  if n == 0 then
    redis.call('del', reasons)
  else
    redis.call('ltrim', reasons, -n, -1)
  end
end
