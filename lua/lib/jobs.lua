-- Job histories (src/queue/jobs.rs): a value offered with an id is a job,
-- and delayq keeps where it is and its last attempts in delayq_jobs:{N}
-- (HASH), from its transfer to its ack or dead letter and after:
--   h:<id>       the job's record, JSON: s = state ('ready', 'in_flight',
--                'pending' (a retry through the delayed queue), 'dead',
--                'handled', 'deleted'), t = since when (ms), n = attempts
--                in all, a = the last DELAYQ_JOBS_ATTEMPTS attempts (each:
--                s start, e end, w the consumer, d delivery id (hex),
--                o outcome, x error, c its source chain, b a backtrace),
--                r = why (a dead letter), d = the delivery running it.
--   r:<sha1>     ids of the ready values with that payload, oldest first
--                (the destination list holds only payloads: equal payloads
--                of different jobs each get one id, in the order they came).
--   l:<delivery> the id of the job a delivery (8 bytes) runs.
-- A dead letter keeps its id in its reason record (lib/element.lua), which
-- stays aligned with it through requeues and deletes.
-- Java sees none of this: the payloads are untouched.
--
-- Bounded: DELAYQ_JOBS_ATTEMPTS attempts a job, DELAYQ_JOBS_ERROR_BYTES of
-- error text an attempt, DELAYQ_JOBS_PER_VALUE ids per payload, and at most
-- DELAYQ_JOBS_CAP fields (past it a new job's history is not started,
-- counted in the field 'skipped'). Cleaned: a handled or deleted job's
-- record expires after the time the consumer asks for (ARGV of ack); a
-- ready record and its r: entry a week after their last write (a Java
-- consumer or a plain take may have taken the value). delayq_jobs_expiry:{N}
-- (ZSET: field → ms) is reaped a few fields per call that writes.

local DELAYQ_JOBS_ATTEMPTS = 10
local DELAYQ_JOBS_ERROR_BYTES = 4096
local DELAYQ_JOBS_PER_VALUE = 16
local DELAYQ_JOBS_CAP = 1000000
local DELAYQ_JOBS_READY_TTL = 7 * 86400000
local DELAYQ_JOBS_REAP = 8

-- The keys' types, when the call gives them (a script run by hand with
-- fewer KEYS keeps no history).
local function delayq_jobs_check(jobs, expiry)
  if not jobs then return nil end
  return delayq_check_types(jobs, 'hash', expiry, 'zset')
end

-- Whether there are job records to look in.
local function delayq_jobs_on(jobs)
  return jobs ~= nil and redis.call('exists', jobs) == 1
end

local function delayq_jobs_hex(bytes)
  return (string.gsub(bytes, '.', function(c) return string.format('%02x', string.byte(c)) end))
end

-- At most n bytes of text, not cutting a UTF-8 character.
local function delayq_jobs_cap(text, n)
  if not text or text == '' then return nil end
  if #text <= n then return text end
  local cut = n
  while cut > 0 do
    local b = string.byte(text, cut + 1)
    if not b or b < 128 or b >= 192 then break end
    cut = cut - 1
  end
  return string.sub(text, 1, cut)
end

local function delayq_jobs_reap(jobs, expiry, now)
  local old = redis.call('zrangebyscore', expiry, '-inf', now, 'LIMIT', 0, DELAYQ_JOBS_REAP)
  if #old > 0 then
    redis.call('hdel', jobs, unpack(old))
    redis.call('zrem', expiry, unpack(old))
  end
end

local function delayq_jobs_expire(jobs, expiry, field, at)
  if at then
    redis.call('zadd', expiry, at, field)
  else
    redis.call('zrem', expiry, field)
  end
end

-- The record of a job (a table), or nil.
local function delayq_jobs_get(jobs, id)
  local raw = redis.call('hget', jobs, 'h:' .. id)
  if not raw then return nil end
  return cjson.decode(raw)
end

-- Writes a job's record in `state`, expiring at `expires` (nil: never).
local function delayq_jobs_put(jobs, expiry, id, record, state, now, expires)
  record.s, record.t = state, now
  if record.a and #record.a == 0 then record.a = nil end
  redis.call('hset', jobs, 'h:' .. id, cjson.encode(record))
  delayq_jobs_expire(jobs, expiry, 'h:' .. id, expires)
end

-- A job's record, or a new one while the cap allows (nil past it).
local function delayq_jobs_open(jobs, id)
  local record = delayq_jobs_get(jobs, id)
  if record then return record end
  if redis.call('hlen', jobs) >= DELAYQ_JOBS_CAP then
    redis.call('hincrby', jobs, 'skipped', 1)
    return nil
  end
  return {n = 0}
end

-- The ids filed under a payload, and its field.
local function delayq_jobs_ready_ids(jobs, payload)
  local field = 'r:' .. redis.sha1hex(payload)
  local raw = redis.call('hget', jobs, field)
  return raw and cjson.decode(raw) or {}, field
end

local function delayq_jobs_ready_save(jobs, expiry, field, ids, now)
  if #ids == 0 then
    redis.call('hdel', jobs, field)
    redis.call('zrem', expiry, field)
  else
    redis.call('hset', jobs, field, cjson.encode(ids))
    redis.call('zadd', expiry, now + DELAYQ_JOBS_READY_TTL, field)
  end
end

-- The job `id` is ready again with this payload: first in line (`head`) or
-- last. Its record says 'ready'.
local function delayq_jobs_ready(jobs, expiry, payload, id, now, head)
  local record = delayq_jobs_open(jobs, id)
  if not record then return end
  local ids, field = delayq_jobs_ready_ids(jobs, payload)
  if #ids >= DELAYQ_JOBS_PER_VALUE then
    redis.call('hincrby', jobs, 'skipped', 1)
    return
  end
  if head then table.insert(ids, 1, id) else ids[#ids + 1] = id end
  delayq_jobs_ready_save(jobs, expiry, field, ids, now)
  record.d, record.r = nil, nil
  delayq_jobs_put(jobs, expiry, id, record, 'ready', now, now + DELAYQ_JOBS_READY_TTL)
end

-- Transferred elements with their ids (lib/ids.lua's delayq_ids_take;
-- false: none): each id goes with its payload to the ready state. Reads
-- each record and ready list once, and writes them all in one HSET and one
-- ZADD (a transfer moves up to hundreds at a time).
local function delayq_jobs_transferred(jobs, expiry, elements, ids)
  if not jobs then return end
  local now, room
  local records, lists, order = {}, {}, {}
  for i = 1, #elements do
    local id = ids[i]
    local payload = id and delayq_payload(elements[i])
    if payload then
      if not now then
        now = delayq_server_ms()
        room = DELAYQ_JOBS_CAP - redis.call('hlen', jobs)
      end
      local field = 'r:' .. redis.sha1hex(payload)
      if not lists[field] then
        local raw = redis.call('hget', jobs, field)
        lists[field] = raw and cjson.decode(raw) or {}
        order[#order + 1] = field
        if not raw then room = room - 1 end
      end
      local list = lists[field]
      local record = records['h:' .. id]
      if not record then
        local raw = redis.call('hget', jobs, 'h:' .. id)
        if raw then
          record = cjson.decode(raw)
        elseif room > 0 then
          record, room = {n = 0}, room - 1
        end
        if record then
          records['h:' .. id] = record
          order[#order + 1] = 'h:' .. id
        end
      end
      if not record or #list >= DELAYQ_JOBS_PER_VALUE then
        redis.call('hincrby', jobs, 'skipped', 1)
      else
        list[#list + 1] = id
        record.s, record.t, record.d, record.r = 'ready', now, nil, nil
        if record.a and #record.a == 0 then record.a = nil end
      end
    end
  end
  if not now then return end
  local fields, scores = {}, {}
  local expires = now + DELAYQ_JOBS_READY_TTL
  for _, field in ipairs(order) do
    local value = lists[field] or records[field]
    if string.sub(field, 1, 2) ~= 'r:' or #value > 0 then
      fields[#fields + 1] = field
      fields[#fields + 1] = cjson.encode(value)
      scores[#scores + 1] = expires
      scores[#scores + 1] = field
    end
  end
  delayq_call_chunked('hset', jobs, fields)
  delayq_call_chunked('zadd', expiry, scores)
  delayq_jobs_reap(jobs, expiry, now)
end

-- Takes the id of the oldest ready job with this payload, or false.
local function delayq_jobs_take_ready(jobs, expiry, payload, now)
  local ids, field = delayq_jobs_ready_ids(jobs, payload)
  if #ids == 0 then return false end
  local id = table.remove(ids, 1)
  delayq_jobs_ready_save(jobs, expiry, field, ids, now)
  return id
end

-- A claim of the job `id` as `delivery` by `worker`: its attempt starts.
local function delayq_jobs_start(jobs, expiry, id, delivery, worker, now)
  local record = delayq_jobs_get(jobs, id) or {n = 0}
  local attempts = record.a or {}
  attempts[#attempts + 1] = {s = now, w = worker, d = delayq_jobs_hex(delivery)}
  while #attempts > DELAYQ_JOBS_ATTEMPTS do table.remove(attempts, 1) end
  record.a, record.n, record.d, record.r = attempts, (record.n or 0) + 1, delayq_jobs_hex(delivery), nil
  redis.call('hset', jobs, 'l:' .. delivery, id)
  delayq_jobs_put(jobs, expiry, id, record, 'in_flight', now, nil)
end

-- A delivery ends: its job's current attempt gets its end, outcome and
-- error (error, chain, backtrace; capped together at
-- DELAYQ_JOBS_ERROR_BYTES). Returns the job's id and record, or nil for a
-- delivery with no job. The caller writes the record's next state.
local function delayq_jobs_end(jobs, delivery, outcome, now, error, chain, backtrace)
  local id = redis.call('hget', jobs, 'l:' .. delivery)
  if not id then return nil end
  redis.call('hdel', jobs, 'l:' .. delivery)
  local record = delayq_jobs_get(jobs, id) or {n = 0}
  local attempts = record.a or {}
  local last = attempts[#attempts]
  if last and not last.e then
    if outcome == 'unhandled' then
      -- It never reached a handler: no attempt.
      attempts[#attempts] = nil
      record.n = math.max(0, (record.n or 1) - 1)
    else
      last.e, last.o = now, outcome
      local left = DELAYQ_JOBS_ERROR_BYTES
      last.x = delayq_jobs_cap(error, left)
      left = left - #(last.x or '')
      last.c = delayq_jobs_cap(chain, left)
      left = left - #(last.c or '')
      last.b = delayq_jobs_cap(backtrace, left)
    end
  end
  record.a, record.d = attempts, nil
  return id, record
end

-- A delivery that ended goes back to the ready list (a give-back, a
-- timeout): its job is ready again, first in line when `head`.
local function delayq_jobs_end_ready(jobs, expiry, delivery, outcome, value, now, head)
  local id, record = delayq_jobs_end(jobs, delivery, outcome, now)
  if not id then return end
  delayq_jobs_put(jobs, expiry, id, record, 'ready', now, now + DELAYQ_JOBS_READY_TTL)
  local ids, field = delayq_jobs_ready_ids(jobs, value)
  if #ids < DELAYQ_JOBS_PER_VALUE then
    if head then table.insert(ids, 1, id) else ids[#ids + 1] = id end
    delayq_jobs_ready_save(jobs, expiry, field, ids, now)
  end
end

-- The reason record of a dead letter of job `id` (false: none), as
-- lib/element.lua's delayq_dead_letter writes it: '\30<length>:<id>' before
-- the reason.
local function delayq_jobs_reason(id, reason)
  if not id then return reason end
  return '\30' .. #id .. ':' .. id .. reason
end

-- The job id a reason record carries ('<ms> ' then delayq_jobs_reason), or nil.
local function delayq_jobs_reason_id(record)
  if not record then return nil end
  local at = string.find(record, ' \30', 1, true)
  if not at then return nil end
  local n, colon = string.match(record, '^(%d+)():', at + 2)
  if not n then return nil end
  return string.sub(record, colon + 1, colon + tonumber(n))
end

-- A job is dead-lettered, why.
local function delayq_jobs_dead(jobs, expiry, id, record, reason, now)
  record.r = reason
  delayq_jobs_put(jobs, expiry, id, record, 'dead', now, nil)
end

-- How long the record of a deleted dead letter's job is kept.
local DELAYQ_JOBS_DELETED_TTL = 86400000

-- Dead letters leaving the list: `records` are their reason records;
-- requeued ones (`values` given) are ready again, deleted ones expire
-- after DELAYQ_JOBS_DELETED_TTL.
local function delayq_jobs_from_dead(jobs, expiry, records, values, now)
  for i = 1, #records do
    local id = delayq_jobs_reason_id(records[i])
    if id then
      if values then
        delayq_jobs_ready(jobs, expiry, values[i], id, now, false)
      else
        local record = delayq_jobs_get(jobs, id)
        if record then
          record.r = nil
          delayq_jobs_put(jobs, expiry, id, record, 'deleted', now, now + DELAYQ_JOBS_DELETED_TTL)
        end
      end
    end
  end
end
