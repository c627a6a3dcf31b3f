-- LIBS: element offer request ids
-- migrate: rewrite a slice of the pending list in one element format, keeping
-- every element's score and position (delayq's answer to Redisson #5595/#5040).
-- KEYS: 1 pending list, 2 timeout set, 3 id index, 4 request key
--       (lib/request.lua: a resend returns the first run's counts; run
--       again, it would count what the first run converted as "already")
-- ARGV: 1 target format ('modern' or 'legacy'), 2 start index, 3 count,
--       4.. one fresh 8-byte id per element of the slice
-- An element offered with an id keeps it: its id bytes in the target layout
-- come from the id again (lib/ids.lua), and its index entry moves with it.
-- Returns {next start index, converted, already in format, malformed, not in the timeout set}.
local replayed = delayq_replayed(KEYS[4])
if replayed then return replayed end
local bad = delayq_check_types(KEYS[1], 'list', KEYS[2], 'zset', KEYS[3], 'hash')
if bad then return bad end
local target = ARGV[1]
local start = tonumber(ARGV[2])
local elements = redis.call('lrange', KEYS[1], start, start + tonumber(ARGV[3]) - 1)
local converted, already, malformed, orphans = 0, 0, 0, 0
for i = 1, #elements do
  local element = elements[i]
  local payload, format = delayq_payload(element)
  if not payload then
    malformed = malformed + 1
  elseif format == target then
    already = already + 1
  else
    local score = redis.call('zscore', KEYS[2], element)
    local id_bytes = ARGV[3 + i]
    local field = delayq_element_id(element)
    local entry = redis.call('hget', KEYS[3], field)
    local indexed, id = nil, nil
    if entry then
      indexed, id = delayq_id_element(entry)
    end
    if indexed == element then
      id_bytes = delayq_id_bytes(target, id)
    else
      id = nil
    end
    local repacked = delayq_pack(target, id_bytes, payload)
    if not score or redis.call('zscore', KEYS[2], repacked) then
      -- In the list but not the timeout set: not ours to touch. (Or, beyond
      -- unlikely, the new id collides: left for the next pass.)
      orphans = orphans + 1
    else
      redis.call('zrem', KEYS[2], element)
      redis.call('zadd', KEYS[2], score, repacked)
      redis.call('lset', KEYS[1], start + i - 1, repacked)
      if id then
        redis.call('hdel', KEYS[3], field)
        redis.call('hset', KEYS[3], id_bytes, delayq_id_entry(id, repacked))
      end
      converted = converted + 1
    end
  end
end
return delayq_answer(KEYS[4], {start + #elements, converted, already, malformed, orphans})
