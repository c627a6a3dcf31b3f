-- LIBS: element offer events limits
-- offer_dedup: offer elements each under a deduplication key, within a
-- window (DelayedQueue::offer_dedup, offer_all_dedup): an element whose key
-- was recorded within the window is not offered and answers 'duplicate',
-- even when the first one was taken meanwhile, until the window ends.
-- KEYS: 1 timeout set, 2 pending list, 3 channel, 4 events config, 5 events
--       stream (lib/events.lua: one 'offered' event with the count offered,
--       one 'duplicate' with the count refused as duplicates, one 'refused'
--       with the count the limits refused, duplicates not counted, when
--       they refuse the run), 6 stats hash (the 'offered' total: values
--       queued; the 'duplicate' total: values answered 0; each counted by
--       the first run only),
--       7 limits hash (lib/limits.lua), 8 destination list (counted by
--       'max_size'), 9 dedup records, 10 dedup expiry
-- ARGV: 1 the window in ms, then due_1, element_1, key_1, due_2, ... (a due
--       time is ms since the epoch, or "+delay_ms" from the server's clock);
--       a key is 'i:<id>' (by the caller's id) or 'p' (by the payload: the
--       script names it 'p:<SHA-1 hex of the payload>')
-- Returns, per element in order, 1 (offered) or 0 (a duplicate). A run the
-- queue's limits do not admit whole (the elements it would offer) offers
-- nothing, records nothing and answers the first refusal, as offer.lua.
--
-- Records: the HASH of KEYS[9] maps a key to the first 16 bytes of the
-- element offered under it (its random id and length: unique per offer).
-- They expire by themselves: by hash-field expiry (HPEXPIRE, Redis >= 7.4,
-- found out by trying it) or, where the server has none, by KEYS[10], a
-- ZSET of key -> expiry ms, of which each run removes at most
-- DEDUP_SWEEP expired records (bounded cost), and a record whose expiry
-- has passed counts as gone even before it is removed.
--
-- Resend rule: a resent run (fred sends it again after a lost reply)
-- answers as its first run and writes nothing (no offer, event or count).
-- A run that found duplicates leaves a run record, 'r:<SHA-1 hex of its
-- elements' headers>' (unique per run, as each header is) -> its answers
-- ('1' offered, '0' duplicate, one a value), expiring with the window: a
-- resend finds it and answers from it. A run without duplicates needs
-- none: its resend finds each element's record holding that element's own
-- header (or the element pending, its record expired in between) and
-- answers 1 for it again, offering nothing twice. A refused run wrote
-- nothing but its 'refused' event.
--
-- The payload is hashed here, with Redis's own SHA-1 (redis.sha1hex): the
-- hash is of the exact bytes stored, whichever client or codec wrote them,
-- and no client has to agree on a digest or send one it could get wrong.
local DEDUP_SWEEP = 100
local bad = delayq_check_types(KEYS[1], 'zset', KEYS[2], 'list', KEYS[9], 'hash', KEYS[10], 'zset')
if bad then return bad end
local events, events_bad = delayq_events_open(KEYS[4], KEYS[5])
if events_bad then return events_bad end
local limits, limits_bad = delayq_limits_open(KEYS[7])
if limits_bad then return limits_bad end
local window = tonumber(ARGV[1])
local now = delayq_server_ms()
local dues, elements, fields = {}, {}, {}
for i = 2, #ARGV, 3 do
  local e, key = ARGV[i + 1], ARGV[i + 2]
  dues[#dues + 1] = delayq_due(ARGV[i])
  elements[#elements + 1] = e
  if key == 'p' then
    key = 'p:' .. redis.sha1hex(delayq_payload(e) or e)
  end
  fields[#fields + 1] = key
end
local n = #elements
local headers = {}
for k = 1, n do
  headers[k] = string.sub(elements[k], 1, 16)
end
local run = 'r:' .. redis.sha1hex(table.concat(headers))
-- A record that has expired counts as gone, swept or not.
local function live(field)
  local record = redis.call('hget', KEYS[9], field)
  local expiry = redis.call('zscore', KEYS[10], field)
  if record and expiry and tonumber(expiry) <= now then
    return false
  end
  return record
end
local before = live(run)
if before then
  local answers = {}
  for k = 1, n do
    answers[k] = tonumber(string.sub(before, k, k)) or 0
  end
  return answers
end
local records = redis.call('hmget', KEYS[9], unpack(fields))
local expiries = redis.call('zmscore', KEYS[10], unpack(fields))
local pending = redis.call('zmscore', KEYS[1], unpack(elements))
local answers, new, seen = {}, {}, {}
for k = 1, n do
  local record = records[k]
  if record and expiries[k] and tonumber(expiries[k]) <= now then
    record = false -- expired, not swept yet
  end
  local header = headers[k]
  if record == header or pending[k] then
    answers[k] = 1 -- this very offer, run before
  elseif record or seen[fields[k]] then
    answers[k] = 0
  else
    answers[k] = 1
    new[#new + 1] = k
  end
  seen[fields[k]] = true
end
local offered = {}
for j = 1, #new do
  offered[j] = elements[new[j]]
end
local admitted, refusal = delayq_admit(limits, KEYS[1], KEYS[8], offered)
if admitted < #offered then
  -- The values the limits refused: the run's duplicates were not theirs.
  delayq_event(events, KEYS[5], 'refused', 'count', #offered, 'reason', delayq_refusal_reason(refusal))
  return redis.error_reply(refusal)
end
if #new > 0 then
  local new_dues = {}
  for j = 1, #new do
    new_dues[j] = dues[new[j]]
  end
  delayq_offer(KEYS[1], KEYS[2], KEYS[3], new_dues, offered)
  delayq_event(events, KEYS[5], 'offered', 'count', #new)
  delayq_count(KEYS[6], 'offered', #new)
end
local duplicates = 0
for k = 1, n do
  duplicates = duplicates + (1 - answers[k])
end
-- The records to write: one per value offered, and the run's own when it
-- found duplicates (its resend answers from it, see the resend rule).
local hset, keys = {}, {}
for j = 1, #new do
  local k = new[j]
  hset[2 * j - 1], hset[2 * j] = fields[k], headers[k]
  keys[j] = fields[k]
end
if duplicates > 0 then
  hset[#hset + 1], hset[#hset + 2] = run, table.concat(answers)
  keys[#keys + 1] = run
end
if #keys > 0 then
  delayq_call_chunked('hset', KEYS[9], hset)
  local expired = redis.pcall('hpexpire', KEYS[9], window, 'FIELDS', #keys, unpack(keys))
  if type(expired) == 'table' and expired.err then
    -- No hash-field expiry on this server: the expiry set keeps the time.
    local zadd = {}
    for j = 1, #keys do
      zadd[2 * j - 1], zadd[2 * j] = now + window, keys[j]
    end
    delayq_call_chunked('zadd', KEYS[10], zadd)
  elseif redis.call('exists', KEYS[10]) == 1 then
    -- Written with a field expiry: an older expiry entry must not sweep it.
    redis.call('zrem', KEYS[10], unpack(keys))
  end
end
if duplicates > 0 then
  delayq_event(events, KEYS[5], 'duplicate', 'count', duplicates)
  delayq_count(KEYS[6], 'duplicate', duplicates)
end
-- The bounded sweep: at most DEDUP_SWEEP expired records per run.
local old = redis.call('zrangebyscore', KEYS[10], '-inf', now, 'LIMIT', 0, DEDUP_SWEEP)
if #old > 0 then
  redis.call('hdel', KEYS[9], unpack(old))
  redis.call('zrem', KEYS[10], unpack(old))
end
return answers
