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
local function delayq_priority_level(member)
  local level = (string.byte(member, 1) or 0) - 48
  if level >= 1 and level <= 9 then
    return level
  end
  return nil
end

-- The member of `payload` at `level`, packed with an id from the counter
-- (a give-back: the value's offered element is gone by then).
local function delayq_priority_member(level, payload, seq)
  return tostring(level) .. delayq_pack('modern', struct.pack('>I8', seq), payload)
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
local function delayq_priority_give_back(ready, marker, destination, level, payloads)
  if #payloads == 0 then
    return
  end
  if level == 0 or not ready or not marker then
    local reversed = {}
    for i = #payloads, 1, -1 do
      reversed[#reversed + 1] = payloads[i]
    end
    delayq_call_chunked('lpush', destination, reversed)
    return
  end
  local base = redis.call('incrby', marker, #payloads)
  local members = {}
  for i = 1, #payloads do
    -- Ids from the counter's new range: unique in the queue.
    members[i] = delayq_priority_member(level, payloads[i], base - #payloads + i)
  end
  delayq_priority_add(ready, marker, members, true)
end

-- Moves delayed members due by `now` to the ready set (at the tails of
-- their levels, in due order), at most DELAYQ_PRIORITY_MOVE. Returns how
-- many moved.
local function delayq_priority_due(ready, delayed, marker, now)
  local due = redis.call('zrangebyscore', delayed, '-inf', now, 'LIMIT', 0, DELAYQ_PRIORITY_MOVE)
  if #due == 0 then
    return 0
  end
  redis.call('zrem', delayed, unpack(due))
  delayq_priority_add(ready, marker, due, false)
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
