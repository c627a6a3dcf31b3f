-- Job histories (src/queue/jobs.rs): a value offered with an id is a job,
-- and delayq keeps where it is and its last attempts in delayq_jobs:{N}
-- (HASH), from its transfer to its ack or dead letter and after:
--   h:<id>       the job's record (delayq_jobs_text): its state ('ready',
--                'in_flight', 'pending' (a retry through the delayed
--                queue), 'dead', 'handled', 'deleted'), since when (ms), the
--                attempts in all, the running attempt (its delivery, start
--                and consumer), why (a dead letter), then the last
--                DELAYQ_JOBS_ATTEMPTS ended attempts as a JSON array (each:
--                s start, e end, w the consumer, d delivery id (hex),
--                o outcome, x error, c its source chain, b a backtrace).
--                Only the reader (lua/job_history.lua: delayq_jobs_json)
--                makes one JSON document of it: the steps of a job's life
--                rewrite the short head in plain text and append to the
--                attempts' text only when an attempt ends.
--   r:<sha1>     ids of the ready values with that payload, oldest first,
--                each as <length>:<id> (the destination list holds only
--                payloads: equal payloads of different jobs each get one
--                id, in the order they came).
--   l:<delivery> the id of the job a delivery (8 bytes) runs.
--   x:<id>       a cancel asked for the job (lua/cancel_job.lua: the ms it
--                was asked): a claim that reaches its value drops it, and
--                a worker running it, which polls these fields, tells its
--                handler, which settles it as cancelled (lua/nack.lua,
--                delay -4). It goes when the job ends (acked, cancelled,
--                dead-lettered), else DELAYQ_JOBS_READY_TTL after it was set.
--   p:<id>       the job's last progress (lua/progress.lua): the delivery
--                that reported it (16 hex digits), its sequence number, the
--                ms it was written and its JSON, each but the last ended by
--                \31; the JSON at most DELAYQ_JOBS_PROGRESS_BYTES.
--   o:<id>       the job's result, written by the ack that ends it: the ms,
--                \31, then the JSON the handler returned (at most
--                DELAYQ_JOBS_RESULT_BYTES). Progress and result expire with
--                the record once the job ends.
-- A dead letter keeps its id in its reason record (lib/element.lua), which
-- stays aligned with it through requeues and deletes.
--   on           the switch (ReliableQueue::set_job_history): how long a
--                handled or deleted job's record is kept, in ms. Only a
--                transfer starts records, and only while it is set; turning
--                history off UNLINKs both keys, so every other script, which
--                looks only when the hash exists (delayq_jobs_on), skips. A
--                queue that never asked pays one EXISTS a call.
-- Java sees none of this: the payloads are untouched.
--
-- Bounded: DELAYQ_JOBS_ATTEMPTS attempts a job, DELAYQ_JOBS_ERROR_BYTES of
-- error text an attempt, DELAYQ_JOBS_PER_VALUE ids per payload, and at most
-- DELAYQ_JOBS_CAP fields (past it a new job's history is not started,
-- counted in the field 'skipped'). Cleaned: a handled or deleted job's
-- record expires after the time the consumer asks for (ARGV of ack); a
-- ready record and its r: entry a week after their last write (a Java
-- consumer or a plain take may have taken the value). delayq_jobs_expiry:{N}
-- (ZSET: field → ms) is reaped by the calls that write: a few fields each,
-- and one more for each record written.
--
-- Cost: the scripts that move many values (transfer, claim_batch,
-- ack_batch) read every field they need in one HMGET and write in one HSET,
-- one HDEL and one ZADD/ZREM each; per value only a SHA-1 of its payload
-- (claims and transfers) and string work remain.

local DELAYQ_JOBS_ATTEMPTS = 10
local DELAYQ_JOBS_ERROR_BYTES = 4096
local DELAYQ_JOBS_PER_VALUE = 16
local DELAYQ_JOBS_CAP = 1000000
local DELAYQ_JOBS_READY_TTL = 7 * 86400000
local DELAYQ_JOBS_REAP = 8
local DELAYQ_JOBS_PROGRESS_BYTES = 4096
local DELAYQ_JOBS_RESULT_BYTES = 65536

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

-- How long a handled or deleted record is kept (ms): the queue's switch,
-- else `fallback` (records left from before the switch existed).
local function delayq_jobs_keep(jobs, fallback)
  return tonumber(redis.call('hget', jobs, 'on')) or tonumber(fallback)
end

-- The fields that are no record: the switch and the skipped count. Never in
-- the expiry set, so reaping never drops them.
local DELAYQ_JOBS_META = 2

local function delayq_jobs_hex(bytes)
  return string.format(string.rep('%02x', #bytes), string.byte(bytes, 1, #bytes))
end

-- A time in ms as the record writes it (tostring would write 1.7e+12).
local function delayq_jobs_ms(ms)
  return string.format('%.0f', ms)
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

-- Drops expired fields: DELAYQ_JOBS_REAP a call, and one more for each
-- record the call wrote (`written`), so that reaping keeps up with scripts
-- that write many (up to DELAYQ_JOBS_REAP_MOST a call).
local DELAYQ_JOBS_REAP_MOST = 512
local function delayq_jobs_reap(jobs, expiry, now, written)
  local most = math.min(DELAYQ_JOBS_REAP + (written or 0), DELAYQ_JOBS_REAP_MOST)
  local old = redis.call('zrangebyscore', expiry, '-inf', now, 'LIMIT', 0, most)
  if #old > 0 then
    redis.call('hdel', jobs, unpack(old))
    redis.call('zrem', expiry, unpack(old))
  end
end

-- HMGET of many fields (nil: absent), in chunks a Lua stack holds.
local function delayq_jobs_hmget(jobs, fields)
  local got = {}
  for i = 1, #fields, 4000 do
    local part = redis.call('hmget', jobs, unpack(fields, i, math.min(i + 3999, #fields)))
    for j = 1, #part do got[fields[i + j - 1]] = part[j] end
  end
  return got
end

-- A record (a table: s state, t since (ms text), n attempts in all, k ended
-- attempts kept, d/o/w the running attempt's delivery (hex), start (ms
-- text) and consumer, r why, a the ended attempts' JSON text or '') from
-- its text, or nil. The text: s, t, n, k, d, o, #w, #r, each ended by
-- \31, then w, r and a.
local DELAYQ_JOBS_HEAD = '^([^\31]*)\31([^\31]*)\31(%d+)\31(%d+)\31([^\31]*)\31([^\31]*)\31(%d+)\31(%d+)\31()'
local function delayq_jobs_parse(raw)
  if not raw then return nil end
  local s, t, n, k, d, o, wn, rn, at = string.match(raw, DELAYQ_JOBS_HEAD)
  if not s then return nil end
  wn, rn = tonumber(wn), tonumber(rn)
  local record = {s = s, t = t, n = tonumber(n), k = tonumber(k), a = string.sub(raw, at + wn + rn)}
  if d ~= '' then record.d = d end
  if o ~= '' then record.o, record.w = o, string.sub(raw, at, at + wn - 1) end
  if rn > 0 then record.r = string.sub(raw, at + wn, at + wn + rn - 1) end
  return record
end

local function delayq_jobs_text(record)
  local w, r = record.w or '', record.r or ''
  return table.concat({record.s, record.t, record.n, record.k, record.d or '', record.o or '', #w, #r, ''}, '\31')
    .. w .. r .. record.a
end

-- A job's record as one JSON document (src/queue/jobs.rs reads it), the
-- running attempt last among its attempts; false for none.
local function delayq_jobs_json(raw)
  local record = delayq_jobs_parse(raw)
  if not record then return false end
  local attempts = record.a ~= '' and cjson.decode(record.a) or {}
  if record.o then
    attempts[#attempts + 1] = {s = tonumber(record.o), w = record.w, d = record.d}
  end
  while #attempts > DELAYQ_JOBS_ATTEMPTS do table.remove(attempts, 1) end
  local out = {s = record.s, t = tonumber(record.t), n = record.n, r = record.r, d = record.d}
  if #attempts > 0 then out.a = attempts end
  return cjson.encode(out)
end

-- A new record (no state yet).
local function delayq_jobs_new()
  return {n = 0, k = 0, a = ''}
end

-- The record of a job (a table), or nil.
local function delayq_jobs_get(jobs, id)
  return delayq_jobs_parse(redis.call('hget', jobs, 'h:' .. id))
end

local function delayq_jobs_expire(jobs, expiry, field, at)
  if at then
    redis.call('zadd', expiry, at, field)
  else
    redis.call('zrem', expiry, field)
  end
end

-- Writes a job's record in `state`, expiring at `expires` (nil: never).
local function delayq_jobs_put(jobs, expiry, id, record, state, now, expires)
  record.s, record.t = state, delayq_jobs_ms(now)
  redis.call('hset', jobs, 'h:' .. id, delayq_jobs_text(record))
  delayq_jobs_expire(jobs, expiry, 'h:' .. id, expires)
end

-- A job's record, or a new one while the cap allows (nil past it).
local function delayq_jobs_open(jobs, id)
  local record = delayq_jobs_get(jobs, id)
  if record then return record end
  if redis.call('hlen', jobs) >= DELAYQ_JOBS_CAP + DELAYQ_JOBS_META then
    redis.call('hincrby', jobs, 'skipped', 1)
    return nil
  end
  return delayq_jobs_new()
end

-- The ids of a ready list's text (nil: none).
local function delayq_jobs_ids(raw)
  local ids, at = {}, 1
  if not raw then return ids end
  while at <= #raw do
    local n, from = string.match(raw, '^(%d+):()', at)
    if not n then break end
    ids[#ids + 1] = string.sub(raw, from, from + n - 1)
    at = from + n
  end
  return ids
end

local function delayq_jobs_ids_text(ids)
  local parts = {}
  for i = 1, #ids do parts[i] = #ids[i] .. ':' .. ids[i] end
  return table.concat(parts)
end

-- The ids filed under a payload, and its field.
local function delayq_jobs_ready_ids(jobs, payload)
  local field = 'r:' .. redis.sha1hex(payload)
  return delayq_jobs_ids(redis.call('hget', jobs, field)), field
end

local function delayq_jobs_ready_save(jobs, expiry, field, ids, now)
  if #ids == 0 then
    redis.call('hdel', jobs, field)
    redis.call('zrem', expiry, field)
  else
    redis.call('hset', jobs, field, delayq_jobs_ids_text(ids))
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
  record.d, record.o, record.w, record.r = nil, nil, nil, nil
  delayq_jobs_put(jobs, expiry, id, record, 'ready', now, now + DELAYQ_JOBS_READY_TTL)
end

-- Writes gathered by a script that changes many jobs: each field's new text
-- (false: deleted) and expiry (a time, false: none, nil: left as it is),
-- sent in one HSET, one HDEL, one ZADD and one ZREM by delayq_jobs_flush.
local function delayq_jobs_batch(jobs, expiry, now)
  return {jobs = jobs, expiry = expiry, now = now, ms = delayq_jobs_ms(now), put = {}, at = {}, order = {}}
end

local function delayq_jobs_set(batch, field, text, expires)
  if batch.put[field] == nil then batch.order[#batch.order + 1] = field end
  batch.put[field] = text
  if expires ~= nil then batch.at[field] = expires end
end

local function delayq_jobs_set_record(batch, id, record, state, expires)
  record.s, record.t = state, batch.ms
  delayq_jobs_set(batch, 'h:' .. id, delayq_jobs_text(record), expires)
end

local function delayq_jobs_set_ids(batch, field, ids)
  if #ids == 0 then
    delayq_jobs_set(batch, field, false, false)
  else
    delayq_jobs_set(batch, field, delayq_jobs_ids_text(ids), batch.now + DELAYQ_JOBS_READY_TTL)
  end
end

local function delayq_jobs_flush(batch)
  local set, del, add, rem = {}, {}, {}, {}
  for _, field in ipairs(batch.order) do
    local text, at = batch.put[field], batch.at[field]
    if text then
      set[#set + 1] = field
      set[#set + 1] = text
    else
      del[#del + 1] = field
    end
    if at then
      add[#add + 1] = at
      add[#add + 1] = field
    elseif at == false then
      rem[#rem + 1] = field
    end
  end
  delayq_call_chunked('hset', batch.jobs, set)
  delayq_call_chunked('hdel', batch.jobs, del)
  delayq_call_chunked('zadd', batch.expiry, add)
  delayq_call_chunked('zrem', batch.expiry, rem)
end

-- Transferred elements with their ids (lib/ids.lua's delayq_ids_take;
-- false: none): each id goes with its payload to the ready state. Reads
-- every record and ready list in one HMGET, writes them in one HSET and one
-- ZADD (a transfer moves up to hundreds at a time). The only place records
-- start: nothing unless the queue's switch ('on') is set.
local function delayq_jobs_transferred(jobs, expiry, elements, ids)
  if not jobs or not ids or redis.call('hexists', jobs, 'on') == 0 then return end
  local items, fields, seen = {}, {}, {}
  for i = 1, #elements do
    local id = ids[i]
    local payload = id and delayq_payload(elements[i])
    if payload then
      local field = 'r:' .. redis.sha1hex(payload)
      items[#items + 1] = {id, field}
      for _, f in ipairs({field, 'h:' .. id}) do
        if not seen[f] then
          seen[f] = true
          fields[#fields + 1] = f
        end
      end
    end
  end
  if #items == 0 then return end
  local now = delayq_server_ms()
  local raw = delayq_jobs_hmget(jobs, fields)
  local room = DELAYQ_JOBS_CAP + DELAYQ_JOBS_META - redis.call('hlen', jobs)
  local batch = delayq_jobs_batch(jobs, expiry, now)
  local lists, records = {}, {}
  for _, item in ipairs(items) do
    local id, field = item[1], item[2]
    local list = lists[field]
    if not list then
      list = delayq_jobs_ids(raw[field])
      lists[field] = list
      if not raw[field] then room = room - 1 end
    end
    local record = records[id]
    if record == nil then
      record = delayq_jobs_parse(raw['h:' .. id]) or false
      -- A new job under the id (anything but a retry of it coming back):
      -- an earlier one's cancel, progress and result are not its own.
      if not record or record.s ~= 'pending' then
        for _, f in ipairs({'x:', 'o:', 'p:'}) do delayq_jobs_set(batch, f .. id, false, false) end
      end
      if not record and room > 0 then record, room = delayq_jobs_new(), room - 1 end
      records[id] = record
    end
    if not record or #list >= DELAYQ_JOBS_PER_VALUE then
      redis.call('hincrby', jobs, 'skipped', 1)
    else
      list[#list + 1] = id
      record.d, record.o, record.w, record.r = nil, nil, nil, nil
      delayq_jobs_set_record(batch, id, record, 'ready', now + DELAYQ_JOBS_READY_TTL)
    end
  end
  for field, list in pairs(lists) do
    if #list > 0 then delayq_jobs_set_ids(batch, field, list) end
  end
  delayq_jobs_flush(batch)
  delayq_jobs_reap(jobs, expiry, now, #items)
end

-- Values about to be claimed (or dead-lettered by a claim): the id of the
-- oldest ready job with each one's payload (false: none) is taken from its
-- ready list, into batch.ids, and its record loaded; two HMGETs for all.
-- delayq_jobs_claimed / delayq_jobs_claim_dead then say what became of each,
-- and delayq_jobs_flush writes it all.
local function delayq_jobs_claims(jobs, expiry, values, now)
  local batch = delayq_jobs_batch(jobs, expiry, now)
  batch.ids, batch.records = {}, {}
  local by_value, fields, seen = {}, {}, {}
  for i = 1, #values do
    local field = 'r:' .. redis.sha1hex(values[i])
    by_value[i] = field
    if not seen[field] then
      seen[field] = true
      fields[#fields + 1] = field
    end
  end
  local raw = delayq_jobs_hmget(jobs, fields)
  local lists, wanted = {}, {}
  for i = 1, #values do
    local field = by_value[i]
    local list = lists[field]
    if not list and raw[field] then
      list = delayq_jobs_ids(raw[field])
      lists[field] = list
    end
    local id = list and #list > 0 and table.remove(list, 1) or false
    batch.ids[i] = id
    if id then
      wanted[#wanted + 1] = 'h:' .. id
      wanted[#wanted + 1] = 'x:' .. id
    end
  end
  for field, list in pairs(lists) do delayq_jobs_set_ids(batch, field, list) end
  -- Jobs whose cancel was asked (x:<id>): delayq_jobs_claim_cancelled.
  batch.cancel = {}
  if #wanted > 0 then
    local records = delayq_jobs_hmget(jobs, wanted)
    for i = 1, #values do
      local id = batch.ids[i]
      if id then
        batch.records[id] = delayq_jobs_parse(records['h:' .. id]) or delayq_jobs_new()
        if records['x:' .. id] then batch.cancel[id] = true end
      end
    end
  end
  return batch
end

-- Whether the i-th value of a claims batch is a job whose cancel was asked.
local function delayq_jobs_claim_is_cancelled(batch, i)
  local id = batch.ids[i]
  return id and batch.cancel[id] or false
end

-- How long a cancelled job's record is kept when the queue's switch does
-- not say (as a deleted one's).
local DELAYQ_JOBS_CANCELLED_TTL = 86400000

-- The i-th value of a claims batch is a job whose cancel was asked: it is
-- dropped, not claimed. Its record says 'cancelled' (kept as a handled
-- one), and its cancel flag goes.
local function delayq_jobs_claim_cancelled(batch, i)
  local id = batch.ids[i]
  local record = batch.records[id]
  record.r = 'cancelled before it ran'
  delayq_jobs_set_record(batch, id, record, 'cancelled', batch.now + delayq_jobs_keep(batch.jobs, DELAYQ_JOBS_CANCELLED_TTL))
  delayq_jobs_set(batch, 'x:' .. id, false, false)
end

-- The i-th value of a claims batch is claimed as `delivery` by `worker`:
-- its job's attempt starts.
local function delayq_jobs_claimed(batch, i, delivery, worker)
  local id = batch.ids[i]
  if not id then return end
  local record = batch.records[id]
  record.n, record.d, record.o, record.r = record.n + 1, delayq_jobs_hex(delivery), batch.ms, nil
  record.w = worker or ''
  delayq_jobs_set(batch, 'l:' .. delivery, id, nil)
  delayq_jobs_set_record(batch, id, record, 'in_flight', false)
end

-- The i-th value of a claims batch is dead-lettered, why.
local function delayq_jobs_claim_dead(batch, i, reason)
  local id = batch.ids[i]
  if not id then return end
  local record = batch.records[id]
  record.r = reason
  delayq_jobs_set_record(batch, id, record, 'dead', false)
  delayq_jobs_set(batch, 'x:' .. id, false, false)
end

-- Takes the id of the oldest ready job with this payload, or false.
local function delayq_jobs_take_ready(jobs, expiry, payload, now)
  local ids, field = delayq_jobs_ready_ids(jobs, payload)
  if #ids == 0 then return false end
  local id = table.remove(ids, 1)
  delayq_jobs_ready_save(jobs, expiry, field, ids, now)
  return id
end

-- The running attempt of a record ends: it joins the ended ones with its
-- end, outcome and error (error, chain, backtrace; capped together at
-- DELAYQ_JOBS_ERROR_BYTES), appended to their JSON text; only past
-- DELAYQ_JOBS_ATTEMPTS is the text decoded, to drop the oldest.
local function delayq_jobs_close(record, outcome, now, error, chain, backtrace)
  if record.o then
    if outcome == 'unhandled' then
      -- It never reached a handler: no attempt.
      record.n = math.max(0, record.n - 1)
    else
      local attempt = {s = tonumber(record.o), e = now, w = record.w, d = record.d, o = outcome}
      local left = DELAYQ_JOBS_ERROR_BYTES
      attempt.x = delayq_jobs_cap(error, left)
      left = left - #(attempt.x or '')
      attempt.c = delayq_jobs_cap(chain, left)
      left = left - #(attempt.c or '')
      attempt.b = delayq_jobs_cap(backtrace, left)
      if record.k >= DELAYQ_JOBS_ATTEMPTS then
        local attempts = cjson.decode(record.a)
        while #attempts >= DELAYQ_JOBS_ATTEMPTS do table.remove(attempts, 1) end
        attempts[#attempts + 1] = attempt
        record.a, record.k = cjson.encode(attempts), #attempts
      elseif record.a == '' then
        record.a, record.k = '[' .. cjson.encode(attempt) .. ']', 1
      else
        record.a, record.k = string.sub(record.a, 1, -2) .. ',' .. cjson.encode(attempt) .. ']', record.k + 1
      end
    end
  end
  record.d, record.o, record.w = nil, nil, nil
end

-- A delivery ends: its job's current attempt ends (delayq_jobs_close).
-- Returns the job's id and record, or nil for a delivery with no job. The
-- caller writes the record's next state.
local function delayq_jobs_end(jobs, delivery, outcome, now, error, chain, backtrace)
  local id = redis.call('hget', jobs, 'l:' .. delivery)
  if not id then return nil end
  redis.call('hdel', jobs, 'l:' .. delivery)
  local record = delayq_jobs_get(jobs, id) or delayq_jobs_new()
  delayq_jobs_close(record, outcome, now, error, chain, backtrace)
  return id, record
end

-- A job ends (acked, cancelled, dead-lettered): its cancel flag goes, and
-- its progress is kept as long as its record (ZADD XX: only one there is).
local function delayq_jobs_ended(batch, ids, expires)
  local again = {}
  for _, id in ipairs(ids) do
    delayq_jobs_set(batch, 'x:' .. id, false, false)
    if expires then
      again[#again + 1] = expires
      again[#again + 1] = 'p:' .. id
    end
  end
  for i = 1, #again, 4000 do
    redis.call('zadd', batch.expiry, 'XX', unpack(again, i, math.min(i + 3999, #again)))
  end
end

-- A job's result as o:<id> holds it (nil: none, or too large to keep).
local function delayq_jobs_result_text(result, now)
  if not result or result == '' or #result > DELAYQ_JOBS_RESULT_BYTES then return nil end
  return delayq_jobs_ms(now) .. '\31' .. result
end

-- Deliveries (8-byte ids) acked: their jobs' attempts end 'ok' and each
-- record is 'handled', kept until `expires`, with its result when
-- `results` (delivery -> JSON) has one. Two HMGETs, one HDEL, one HSET
-- and one ZADD for all. Returns the jobs' ids, in order, and the ids of
-- those whose result it kept.
local function delayq_jobs_acked(jobs, expiry, deliveries, now, expires, results)
  local fields = {}
  for i = 1, #deliveries do fields[i] = 'l:' .. deliveries[i] end
  local raw = delayq_jobs_hmget(jobs, fields)
  local ids, links, wanted, ran = {}, {}, {}, {}
  for i = 1, #fields do
    local id = raw[fields[i]]
    if id then
      ids[#ids + 1] = id
      links[#links + 1] = fields[i]
      wanted[#wanted + 1] = 'h:' .. id
      ran[#ids] = deliveries[i]
    end
  end
  if #ids == 0 then return ids, {} end
  local records = delayq_jobs_hmget(jobs, wanted)
  local batch = delayq_jobs_batch(jobs, expiry, now)
  for _, field in ipairs(links) do delayq_jobs_set(batch, field, false, nil) end
  local parsed, kept = {}, {}
  for i, id in ipairs(ids) do
    local record = parsed[id] or delayq_jobs_parse(records['h:' .. id]) or delayq_jobs_new()
    parsed[id] = record
    delayq_jobs_close(record, 'ok', now)
    delayq_jobs_set_record(batch, id, record, 'handled', expires)
    local result = results and delayq_jobs_result_text(results[ran[i]], now)
    if result then
      delayq_jobs_set(batch, 'o:' .. id, result, expires)
      kept[#kept + 1] = id
    else
      -- An earlier attempt's result (its ack came too late) is not this one's.
      delayq_jobs_set(batch, 'o:' .. id, false, false)
    end
  end
  delayq_jobs_ended(batch, ids, expires)
  delayq_jobs_flush(batch)
  return ids, kept
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
  local _, at = delayq_dead_record_headers(record)
  if string.byte(record, at) ~= 30 then return nil end
  local n, colon = string.match(record, '^(%d+)():', at + 1)
  if not n then return nil end
  return string.sub(record, colon + 1, colon + tonumber(n))
end

-- One job ends (acked, cancelled, dead-lettered): delayq_jobs_ended for
-- one, written at once. `expires` nil: its progress keeps its expiry.
local function delayq_jobs_end_one(jobs, expiry, id, expires)
  redis.call('hdel', jobs, 'x:' .. id)
  redis.call('zrem', expiry, 'x:' .. id)
  if expires then redis.call('zadd', expiry, 'XX', expires, 'p:' .. id) end
end

-- A job is dead-lettered, why.
local function delayq_jobs_dead(jobs, expiry, id, record, reason, now)
  record.r = reason
  delayq_jobs_put(jobs, expiry, id, record, 'dead', now, nil)
  delayq_jobs_end_one(jobs, expiry, id, nil)
end

-- A job stopped on its cancel (lua/nack.lua, delay -4: while it ran;
-- lua/cancel_job.lua: while a retry waited): its record says 'cancelled',
-- and why, kept as a handled one.
local function delayq_jobs_cancelled(jobs, expiry, id, record, now, expires, why)
  record.r = why
  delayq_jobs_put(jobs, expiry, id, record, 'cancelled', now, expires)
  delayq_jobs_end_one(jobs, expiry, id, expires)
end

-- How long the record of a deleted dead letter's job is kept when the
-- queue's switch does not say.
local DELAYQ_JOBS_DELETED_TTL = 86400000

-- Dead letters leaving the list: `records` are their reason records;
-- requeued ones (`values` given) are ready again, deleted ones expire
-- after the queue's keep time (delayq_jobs_keep).
local function delayq_jobs_from_dead(jobs, expiry, records, values, now)
  local keep = delayq_jobs_keep(jobs, DELAYQ_JOBS_DELETED_TTL)
  for i = 1, #records do
    local id = delayq_jobs_reason_id(records[i])
    if id then
      if values then
        delayq_jobs_ready(jobs, expiry, values[i], id, now, false)
      else
        local record = delayq_jobs_get(jobs, id)
        if record then
          record.r = nil
          delayq_jobs_put(jobs, expiry, id, record, 'deleted', now, now + keep)
        end
      end
    end
  end
end
