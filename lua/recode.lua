-- LIBS: element offer request ids
-- recode: replace the payloads of pending elements, in place (delayq's codec
-- migration: `delayq migrate --from-codec A --to-codec B`). Each element keeps
-- its score, its place in the pending list, its layout and its 8 id bytes, so
-- an id offered with it still finds it; only the payload changes. Java sees
-- the old element or the new one, never both or neither.
-- KEYS: 1 pending list, 2 timeout set, 3 id index, 4 request key
--       (lib/request.lua: a resend returns the first run's answer)
-- ARGV: 1 start index of the slice the client read, 2 its length, 3 its
--       last element (the anchor), then triples: offset in the slice
--       (0-based), the element read there, its new payload.
-- Cost: an LRANGE of the slice (and at most one more of the slice before
-- it) and one LSET per rewritten element; each walks the list from its
-- nearer end, so a call costs O(slice × distance from that end / node
-- size). The client keeps slices to 128 elements and 1 MiB.
-- Returns {converted, changed meanwhile (left for the next pass), not in the
-- timeout set, the index after the anchor (where the next slice starts)}.
-- Transfers (Java's included) remove elements anywhere in the list, so the
-- next slice starts after the anchor wherever it is now, not at start +
-- length: no element slides past unread.
local replayed = delayq_replayed(KEYS[4])
if replayed then return replayed end
local bad = delayq_check_types(KEYS[1], 'list', KEYS[2], 'zset', KEYS[3], 'hash')
if bad then return bad end
local start = tonumber(ARGV[1])
local length = tonumber(ARGV[2])
local anchor = ARGV[3]
local current = redis.call('lrange', KEYS[1], start, start + length - 1)
local converted, moved, orphans = 0, 0, 0
for i = 4, #ARGV, 3 do
  local offset = tonumber(ARGV[i])
  local element = ARGV[i + 1]
  local _, format = delayq_payload(element)
  local score = nil
  if format and current[offset + 1] == element then
    score = redis.call('zscore', KEYS[2], element)
  end
  if not format or current[offset + 1] ~= element then
    -- Taken, transferred or moved along the list since the client read it.
    moved = moved + 1
  elseif not score then
    orphans = orphans + 1
  else
    local id_bytes = delayq_element_id(element)
    local repacked = delayq_pack(format, id_bytes, ARGV[i + 2])
    if redis.call('zscore', KEYS[2], repacked) then
      -- An equal element is pending already (same id bytes, same payload):
      -- two copies cannot share a timeout set, so this one waits.
      moved = moved + 1
    else
      redis.call('zrem', KEYS[2], element)
      redis.call('zadd', KEYS[2], score, repacked)
      redis.call('lset', KEYS[1], start + offset, repacked)
      local entry = redis.call('hget', KEYS[3], id_bytes)
      if entry then
        local indexed, id = delayq_id_element(entry)
        if indexed == element then
          redis.call('hset', KEYS[3], id_bytes, delayq_id_entry(id, repacked))
        end
      end
      converted = converted + 1
    end
  end
end
-- Where the anchor is now: in the slice read here (elements before it were
-- removed), or in the slice before it (it slid that far). Rewrites replaced
-- elements in place, so `current` still gives their indices.
local next_start = nil
for i = #current, 1, -1 do
  if current[i] == anchor then
    next_start = start + i
    break
  end
end
if not next_start and start > 0 then
  local from = math.max(0, start - length)
  local before = redis.call('lrange', KEYS[1], from, start - 1)
  for i = #before, 1, -1 do
    if before[i] == anchor then
      next_start = from + i
      break
    end
  end
end
if not next_start then
  -- The anchor left the list: read again from a slice earlier (what was
  -- rewritten reads as done), and count a pass that must be run again.
  next_start = math.max(0, start - length)
  moved = moved + 1
end
return delayq_answer(KEYS[4], {converted, moved, orphans, next_start})
