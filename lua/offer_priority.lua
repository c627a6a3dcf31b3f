-- LIBS: element offer request events limits priority
-- offer_priority: offer values with a priority level above the default,
-- with a time to live, or with headers (lib/priority.lua): ready ones to the ready set at
-- the tail of their level, delayed ones to the delayed set; Redisson's keys
-- are not touched, so Java never sees them.
-- KEYS: 1 priority ready set, 2 priority delayed set, 3 priority marker,
--       4 timeout set and 5 destination list (counted by 'max_size'), 6
--       limits hash (lib/limits.lua), 7 events config, 8 events stream
--       (lib/events.lua: one 'offered' event per run that adds any, or one
--       'refused'), 9 stats hash (the 'offered' total), 10 request key
--       (lib/request.lua; optional: offers with a TTL send one)
-- ARGV: per value: its level (1-9; with a TTL, 0-9 followed by 'T' to
--       dead-letter it once expired or 't' to drop it, then its TTL in ms
--       from the Redis server's clock now, e.g. '0T30000'; with headers,
--       then 'H' and the headers' JSON object, e.g. '0H{"k":"v"}'), its
--       due time (ms since the epoch, or "+delay_ms" from the Redis
--       server's clock) and its packed element (random id: the member's
--       uniqueness; 'modern' for a value with a TTL or headers)
-- Returns how many values it added. A run the queue's limits do not admit
-- whole adds nothing and answers the refusal (lib/limits.lua).
--
-- Harmless to resend: an element already in either set is not added again
-- (a resend of a run whose reply was lost adds nothing); a value with a TTL
-- (its member holds its expiry, from the clock of the run) is offered with
-- a request key (so are all offers from delayq), and a resend answers the first run's reply. Cost: O(k log n)
-- for k values.
local replayed = KEYS[10] and delayq_replayed(KEYS[10])
if replayed then return replayed end
local bad = delayq_check_types(KEYS[1], 'zset', KEYS[2], 'zset', KEYS[3], 'string', KEYS[4], 'zset', KEYS[5], 'list')
if bad then return bad end
local events, events_bad = delayq_events_open(KEYS[7], KEYS[8])
if events_bad then return events_bad end
local limits, limits_bad = delayq_limits_open(KEYS[6])
if limits_bad then return limits_bad end
if #ARGV % 3 ~= 0 then
  return redis.error_reply('DELAYQ_ARGS offer_priority takes a level, a due time and an element per value')
end
local levels, ttls, headed, dues, elements = {}, {}, {}, {}, {}
for i = 1, #ARGV, 3 do
  local spec = ARGV[i]
  local level = tonumber(string.match(spec, '^%d'))
  local kind, ttl, rest = string.match(spec, '^%d([Tt])(%d+)(.*)$')
  if not kind then
    rest = string.sub(spec, 2)
  end
  local headers = false
  if string.sub(rest, 1, 1) == 'H' then
    headers = string.sub(rest, 2)
    if string.sub(headers, 1, 1) ~= '{' or string.sub(headers, -1) ~= '}' or #headers < 2 or #headers > DELAYQ_HEADERS_MAX then
      return redis.error_reply('DELAYQ_ARGS headers are a JSON object of at most ' .. DELAYQ_HEADERS_MAX .. ' bytes')
    end
    rest = ''
  end
  ttl = tonumber(ttl)
  if not level or rest ~= '' or (ttl and ttl < 1) then
    return redis.error_reply('DELAYQ_ARGS a value is offered with a level 0-9, then T or t and the TTL ms (at least 1), then H and headers, not ' .. string.sub(spec, 1, 40))
  end
  if (kind or headers) and (not delayq_payload(ARGV[i + 2]) or string.byte(ARGV[i + 2], 1) ~= 8) then
    return redis.error_reply('DELAYQ_ARGS a value with a TTL or headers has a modern element')
  end
  if level == 0 and not kind and not headers then
    return redis.error_reply('DELAYQ_ARGS a priority level is 1 to 9, not ' .. spec)
  end
  levels[#levels + 1] = level
  ttls[#ttls + 1] = kind and {kind, ttl} or false
  headed[#headed + 1] = headers and string.format('H%05d', #headers) .. headers or ''
  dues[#dues + 1] = delayq_due(ARGV[i + 1])
  elements[#elements + 1] = ARGV[i + 2]
end
local admitted, refusal = delayq_admit(limits, KEYS[4], KEYS[5], elements, {KEYS[1], KEYS[2]})
if admitted < #elements then
  delayq_event(events, KEYS[8], 'refused', 'count', #elements, 'reason', delayq_refusal_reason(refusal))
  return redis.error_reply(refusal)
end
local now = delayq_server_ms()
local ready, added = {}, 0
for i = 1, #elements do
  local header = ''
  if ttls[i] then
    header = ttls[i][1] .. string.format('%013d', now + ttls[i][2])
  end
  local member = tostring(levels[i]) .. header .. headed[i] .. elements[i]
  if not redis.call('zscore', KEYS[1], member) and not redis.call('zscore', KEYS[2], member) then
    added = added + 1
    if tonumber(dues[i]) <= now then
      ready[#ready + 1] = member
    else
      redis.call('zadd', KEYS[2], dues[i], member)
    end
  end
end
if added > 0 then
  -- The marker exists from the first priority value on, ready or not.
  if #ready > 0 then
    delayq_priority_add(KEYS[1], KEYS[3], ready, false)
  else
    redis.call('incrby', KEYS[3], 0)
  end
  delayq_event(events, KEYS[8], 'offered', 'count', added)
  delayq_count(KEYS[9], 'offered', added)
end
if KEYS[10] then
  return delayq_answer(KEYS[10], added)
end
return added
