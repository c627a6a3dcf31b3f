-- delayq's priorities: levels 1 (low) to 9 (high) above the default 0. The
-- default's values are the destination list itself, all a Java client
-- sees; the others live in delayq's keys of the queue's slot:
--   ready set (ZSET): level digit .. packed element -> score, ordered by
--     level (highest first), then by arrival (a give-back to the head of
--     its level goes before every value of that level);
--   delayed set (ZSET): the same members -> due ms, moved to the ready set
--     by the takes that look at priorities (a bounded number per call);
--   marker (STRING): the counter that orders arrivals; it exists once the
--     queue has had a priority value, and consumers look at priorities
--     only then.
-- A member's packed element gives it a unique id (random from the client;
-- from the counter for a give-back), so equal payloads are distinct
-- members and a resent offer finds its own member instead of adding one.

-- A score of one level spans this much: arrivals count up from the middle
-- (tail) or down from it (head), each from the counter, so 5e13 of each
-- fit, and every score stays an exact double (< 2^53).
local DELAYQ_PRIORITY_SPAN = 1e14
local DELAYQ_PRIORITY_MID = 5e13
-- Due delayed values moved to the ready set per call, at most.
local DELAYQ_PRIORITY_MOVE = 100

-- The level (1-9) of a member, or nil when it is not one of ours.
-- Message TTL: a value offered with a time to live is a member of the
-- priority sets at its level, level 0 included (so Java never sees it),
-- with a header between the level digit and the packed element: 'T' (an
-- expired value is dead-lettered) or 't' (it is dropped), then its expiry
-- as 13 ASCII digits (ms since the epoch, the server's clock). Such a
-- member's element is always packed 'modern' (0x08 first), so no member
-- without a header reads as one with (a legacy element's length field
-- would have to hold ASCII digits). In the ready set level 0 sorts after
-- levels 1-9, and takes read the ready set before the destination list.
-- Message headers: a value offered with headers is a member of the
-- priority sets the same way, with a headers part after any TTL header:
-- 'H', the length of the headers as 5 ASCII digits, then the headers (a
-- JSON object of strings, written and read by the client; at most
-- DELAYQ_HEADERS_MAX bytes). The TTL header and the headers part together
-- are the member's section; a member with a section has a modern element.
-- A delivery of such a value keeps its section in the TTL store
-- (delayq_ttl:{N}, HASH: 8-byte delivery id -> section), so that a
-- give-back rebuilds its member with the same expiry and headers, and a
-- dead letter keeps its headers in its reason record (lib/element.lua).
local DELAYQ_TTL_HEADER = 14
local DELAYQ_HEADERS_MAX = 8192
-- Expired values a take skips per call, at most: past this it answers
-- what it has (the list's head, or nothing) and the next take goes on.
local DELAYQ_PRIORITY_EXPIRE_MAX = 100

-- The length of the section that starts at `at` in `s` (0: none): a TTL
-- header, a headers part, or both in that order.
local function delayq_section_len(s, at)
  local n = 0
  -- A byte compared first: most members have no section (0x08 follows
  -- the level digit), and the patterns cost a take of many values.
  local first = string.byte(s, at)
  if (first == 84 or first == 116) and string.find(s, '^[Tt]%d%d%d%d%d%d%d%d%d%d%d%d%d', at) then
    n = DELAYQ_TTL_HEADER
  end
  if string.byte(s, at + n) ~= 72 then
    return n
  end
  local len = tonumber(string.match(s, '^H(%d%d%d%d%d)', at + n) or '')
  if len and len >= 2 and len <= DELAYQ_HEADERS_MAX and at + n + 5 + len <= #s then
    n = n + 6 + len
  end
  return n
end

-- Whether `header` is a whole section (a TTL header, a headers part, or both).
local function delayq_section_ok(header)
  return type(header) == 'string' and #header > 0 and delayq_section_len(header, 1) == #header
end

-- A section's headers part ('H', length, headers), or nil.
local function delayq_section_headers(header)
  if not header then
    return nil
  end
  local at = string.find(header, '^[Tt]') and DELAYQ_TTL_HEADER + 1 or 1
  if at > #header then
    return nil
  end
  return string.sub(header, at)
end

-- A member's level (0-9), its section (or nil) and its packed element;
-- nil when it is not one of ours (level 0 only with a section).
local function delayq_priority_parse(member)
  local level = (string.byte(member, 1) or 0) - 48
  if level < 0 or level > 9 then
    return nil
  end
  local n = delayq_section_len(member, 2)
  if n > 0 and string.byte(member, 2 + n) == 8 then
    return level, string.sub(member, 2, 1 + n), string.sub(member, 2 + n)
  end
  if level == 0 then
    return nil
  end
  return level, nil, string.sub(member, 2)
end

-- The level (0-9) of a member, or nil when it is not one of ours.
local function delayq_priority_level(member)
  return (delayq_priority_parse(member))
end

-- A section's expiry (ms) and whether an expired value is dead-lettered;
-- nil for a section without a TTL header.
local function delayq_ttl_expiry(header)
  local kind = string.sub(header, 1, 1)
  if kind ~= 'T' and kind ~= 't' then
    return nil
  end
  return tonumber(string.sub(header, 2, DELAYQ_TTL_HEADER)), kind == 'T'
end

-- The member of `payload` at `level`, packed with an id from the counter
-- (a give-back: the value's offered element is gone by then), with its TTL
-- header if it has one.
local function delayq_priority_member(level, payload, seq, header)
  return tostring(level) .. (header or '') .. delayq_pack('modern', struct.pack('>I8', seq), payload)
end

-- Adds members to the ready set, each at the tail of its level, or with
-- `head` at its head (the first of them first, as LPUSH of them last first).
local function delayq_priority_add(ready, marker, members, head)
  local n = #members
  if n == 0 then
    return
  end
  local last = redis.call('incrby', marker, n)
  local args = {}
  for i = 1, n do
    local level = delayq_priority_level(members[i])
    local base = (9 - level) * DELAYQ_PRIORITY_SPAN + DELAYQ_PRIORITY_MID
    local score
    if head then
      score = base - (last - i + 1)
    else
      score = base + (last - n + i)
    end
    args[2 * i - 1] = string.format('%d', score)
    args[2 * i] = members[i]
  end
  delayq_call_chunked('zadd', ready, args)
end

-- Gives payloads back at `level`: to the ready set's head of that level
-- (the first payload first), or for level 0 to the destination's head (so
-- does a run by hand given no priority keys: its values are not lost).
-- `headers` (optional; parallel to payloads, false for none) are their TTL
-- headers: a value with one goes back to the ready set's head of its
-- level, level 0 included, with the same header.
local function delayq_priority_give_back(ready, marker, destination, level, payloads, headers)
  if #payloads == 0 then
    return
  end
  local listed, members = {}, {}
  for i = 1, #payloads do
    local header = headers and headers[i] or nil
    if ready and marker and (level > 0 or header) then
      members[#members + 1] = {payloads[i], header}
    else
      listed[#listed + 1] = payloads[i]
    end
  end
  if #listed > 0 then
    local reversed = {}
    for i = #listed, 1, -1 do
      reversed[#reversed + 1] = listed[i]
    end
    delayq_call_chunked('lpush', destination, reversed)
  end
  if #members == 0 then
    return
  end
  local base = redis.call('incrby', marker, #members)
  for i = 1, #members do
    -- Ids from the counter's new range: unique in the queue.
    members[i] = delayq_priority_member(level, members[i][1], base - #members + i, members[i][2])
  end
  delayq_priority_add(ready, marker, members, true)
end

-- Requeued dead letters that kept their headers (lib/element.lua): to the
-- ready set's tail at the default level, in order, with their headers (a
-- dead letter keeps neither its level nor its TTL).
local function delayq_priority_requeue(ready, marker, payloads, headers)
  if #payloads == 0 then
    return
  end
  local base = redis.call('incrby', marker, #payloads)
  local members = {}
  for i = 1, #payloads do
    members[i] = delayq_priority_member(0, payloads[i], base - #payloads + i, headers[i])
  end
  delayq_priority_add(ready, marker, members, false)
end

-- Moves delayed members due by `now` to the ready set (at the tails of
-- their levels, in due order), at most DELAYQ_PRIORITY_MOVE. Returns how
-- many moved.
local function delayq_priority_due(ready, delayed, marker, now)
  local due = redis.call('zrangebyscore', delayed, '-inf', now, 'LIMIT', 0, DELAYQ_PRIORITY_MOVE)
  if #due == 0 then
    return 0
  end
  -- Added before they leave the delayed set: a member or marker that is
  -- not ours fails the add, and then nothing moved.
  delayq_priority_add(ready, marker, due, false)
  redis.call('zrem', delayed, unpack(due))
  return #due
end

-- When the delayed set's next member is due (ms), or false.
local function delayq_priority_next_due(delayed)
  local head = redis.call('zrange', delayed, 0, 0, 'WITHSCORES')
  return head[2] and tonumber(head[2]) or false
end

-- A lease member's count field (10 digits): the level in its first digit,
-- the delivery count in the other nine.
local function delayq_priority_count_field(level, deliveries)
  if level == 0 and deliveries == 1 then
    return '0000000001'
  end
  return string.format('%010d', level * 1000000000 + deliveries)
end

-- A lease member's level and delivery count.
local function delayq_priority_lease(member)
  local field = tonumber(string.sub(member, 9, 18)) or 0
  local level = math.floor(field / 1000000000)
  return level, field - level * 1000000000
end

-- Expired values met by a take: dead-lettered (reason 'expired') or
-- dropped, and counted. A take opens one with its keys; given no
-- dead-letter list (a run by hand with older keys) nothing expires.
local function delayq_expiry_open(dead, reasons, now)
  if not dead or not reasons then
    return nil
  end
  return {dead = dead, reasons = reasons, now = now, count = 0, dead_lettered = 0}
end

-- Whether a popped member (its TTL header, its payload) expired: then it
-- is dead-lettered or dropped here.
local function delayq_expiry_take(expiry, header, payload)
  if not header or not expiry then
    return false
  end
  local at, dead = delayq_ttl_expiry(header)
  if not at or at > expiry.now then
    return false
  end
  if dead then
    delayq_dead_letter(expiry.dead, expiry.reasons, payload, 'expired', delayq_section_headers(header))
    expiry.dead_lettered = expiry.dead_lettered + 1
  end
  expiry.count = expiry.count + 1
  return true
end

-- Whether a take skipped as many expired values as one call may.
local function delayq_expiry_full(expiry)
  return expiry ~= nil and expiry.count >= DELAYQ_PRIORITY_EXPIRE_MAX
end

-- Takes up to `n` values off the ready set's head, in take order, for
-- pop_priority.lua and claim_batch.lua: each live one goes to
-- `on_value(payload, level, section)`; an expired one is expired
-- (delayq_expiry_take); a member not ours (written by hand) is moved to
-- the dead letters `dead`/`reasons`, or, given none (a run by hand with
-- older keys), stops the take before it and is left in place. It also
-- stops once `room()` (optional) says no, and after as many expired or
-- foreign members as a call may. The members are read in ranges and the
-- ones used removed with one ZREMRANGEBYRANK (a ZPOPMIN per value costs
-- Redis more). Returns how many values it took, whether it stopped at the
-- cap of expired or foreign members (call again), and whether it stopped
-- at a foreign member it could not move.
local function delayq_priority_take(ready, n, expiry, dead, reasons, on_value, room)
  local taken, foreign, used, refused = 0, 0, 0, false
  local function open()
    return taken < n and not delayq_expiry_full(expiry) and foreign < DELAYQ_PRIORITY_EXPIRE_MAX
      and (room == nil or room())
  end
  while not refused and open() do
    local want = n - taken
    local members = redis.call('zrange', ready, used, used + want - 1)
    for _, member in ipairs(members) do
      if not open() then break end
      local level, section, element = delayq_priority_parse(member)
      local payload = level and delayq_payload(element)
      if not payload and dead then
        delayq_dead_letter(dead, reasons, member, 'not a priority entry: moved from ' .. ready)
        foreign = foreign + 1
      elseif not payload then
        refused = true
        break
      elseif not delayq_expiry_take(expiry, section, payload) then
        on_value(payload, level, section)
        taken = taken + 1
      end
      used = used + 1
    end
    if #members < want then break end
  end
  if used > 0 then
    redis.call('zremrangebyrank', ready, 0, used - 1)
  end
  return taken, delayq_expiry_full(expiry) or foreign >= DELAYQ_PRIORITY_EXPIRE_MAX, refused
end

-- After a take: one 'expired' event (how many, and how many of them went
-- to the dead letters), the 'expired' total and the dead-lettered ones in
-- the 'dead_lettered' total.
local function delayq_expiry_close(expiry, events, stream, stats)
  if not expiry or expiry.count == 0 then
    return
  end
  delayq_event(events, stream, 'expired', 'count', expiry.count, 'dead_lettered', expiry.dead_lettered)
  delayq_count(stats, 'expired', expiry.count)
  delayq_count(stats, 'dead_lettered', expiry.dead_lettered)
end

-- A delivery's TTL header in the TTL store, or nil (no store given, or
-- none kept).
local function delayq_ttl_of(store, id)
  if not store then
    return nil
  end
  local header = redis.call('hget', store, id)
  return delayq_section_ok(header) and header or nil
end

-- A delivery's TTL header, taken out of the TTL store as its lease ends
-- (a give-back rebuilds the member with it), or nil.
local function delayq_ttl_take(store, id)
  local header = delayq_ttl_of(store, id)
  if store then
    -- Removed even when not a section (written by hand): the lease ends.
    redis.call('hdel', store, id)
  end
  return header
end
