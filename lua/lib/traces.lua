-- Trace contexts (feature `opentelemetry`, src/queue/traces.rs): an offer
-- made inside a span leaves its W3C trace context beside its element, in
-- delayq_traces:{N} (HASH), so that the handler of the value can continue
-- the trace. The payload itself is untouched, so Java sees nothing. After
-- the transfer only the payload is left in the destination list, so the
-- record is found by the payload: its field is the SHA1 (hex) of the
-- payload, its value the contexts offered with that payload, one a line,
-- "due expires context", oldest first. A consumer takes the oldest entry
-- already due (lua/trace_take.lua): equal payloads of different offers each
-- get one context, in offer order.
--
-- Bounded: past DELAYQ_TRACES_CAP records, or DELAYQ_TRACES_PER_VALUE
-- entries in one record, a context is not stored (the offer still is) and
-- counted in the field 'skipped'. Cleaned: an entry leaves when taken; an
-- entry never taken (the value went to Java, a plain take, a cancel)
-- expires DELAYQ_TRACES_TTL after its due time: delayq_traces_expiry:{N}
-- (ZSET: field → when its record's last entry expires) is reaped a few
-- records per call, and both keys expire with their last entry.

local DELAYQ_TRACES_CAP = 100000
local DELAYQ_TRACES_PER_VALUE = 16
local DELAYQ_TRACES_TTL = 86400000
local DELAYQ_TRACES_REAP = 8
-- How far ahead of the server's clock an entry counts as due (hosts'
-- clocks differ a little under Clock::Local).
local DELAYQ_TRACES_SLACK = 5000

-- Drops a few records whose every entry has expired.
local function delayq_traces_reap(traces, expiry, now)
  local old = redis.call('zrangebyscore', expiry, '-inf', now, 'LIMIT', 0, DELAYQ_TRACES_REAP)
  if #old > 0 then
    redis.call('hdel', traces, unpack(old))
    redis.call('zrem', expiry, unpack(old))
  end
end

-- The entries of a record: {due, expires, context} each.
local function delayq_traces_parse(record)
  local entries = {}
  for due, expires, context in string.gmatch(record or '', '(%d+) (%d+) ([^\n]*)') do
    entries[#entries + 1] = {tonumber(due), tonumber(expires), context}
  end
  return entries
end

-- Stores `context` for each payload, due at dues[i] (ms, as ZADD got it).
local function delayq_traces_put(traces, expiry, context, payloads, dues)
  if #payloads == 0 then
    return
  end
  local now = delayq_server_ms()
  delayq_traces_reap(traces, expiry, now)
  local last = 0
  for i = 1, #payloads do
    local field = redis.sha1hex(payloads[i])
    local record = redis.call('hget', traces, field)
    local entries = record and #delayq_traces_parse(record) or 0
    if (not record and redis.call('hlen', traces) >= DELAYQ_TRACES_CAP) or entries >= DELAYQ_TRACES_PER_VALUE then
      redis.call('hincrby', traces, 'skipped', 1)
    else
      local due = tonumber(dues[i])
      local expires = due + DELAYQ_TRACES_TTL
      local entry = string.format('%d %d %s', due, expires, context)
      redis.call('hset', traces, field, record and (record .. '\n' .. entry) or entry)
      redis.call('zadd', expiry, 'GT', expires, field)
      last = math.max(last, expires)
    end
  end
  if last > 0 then
    for _, k in ipairs({traces, expiry}) do
      redis.call('pexpireat', k, last, 'NX')
      redis.call('pexpireat', k, last, 'GT')
    end
  end
end

-- Takes, for each field, the oldest entry due by now (false: none): its
-- context. Expired entries met on the way are dropped.
local function delayq_traces_take(traces, expiry, fields)
  local now = delayq_server_ms()
  delayq_traces_reap(traces, expiry, now)
  local taken = {}
  for i = 1, #fields do
    taken[i] = false
    local record = redis.call('hget', traces, fields[i])
    if record then
      local kept, last = {}, 0
      for _, e in ipairs(delayq_traces_parse(record)) do
        if e[2] > now then
          if not taken[i] and e[1] <= now + DELAYQ_TRACES_SLACK then
            taken[i] = e[3]
          else
            kept[#kept + 1] = string.format('%d %d %s', e[1], e[2], e[3])
            last = math.max(last, e[2])
          end
        end
      end
      if #kept == 0 then
        redis.call('hdel', traces, fields[i])
        redis.call('zrem', expiry, fields[i])
      else
        redis.call('hset', traces, fields[i], table.concat(kept, '\n'))
        redis.call('zadd', expiry, 'XX', last, fields[i])
      end
    end
  end
  return taken
end

-- delayq_traces_put for packed elements (what an offer script holds).
local function delayq_traces_put_elements(traces, expiry, context, elements, dues)
  local payloads, at = {}, {}
  for i = 1, #elements do
    local payload = delayq_payload(elements[i])
    if payload then
      payloads[#payloads + 1], at[#at + 1] = payload, dues[i]
    end
  end
  delayq_traces_put(traces, expiry, context, payloads, at)
end
