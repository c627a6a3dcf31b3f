-- LIBS: element events priority
-- pop_priority: pop the first values of a queue that has priorities
-- (lib/priority.lua), for takes joined into one run
-- (src/queue/blocking/priorities.rs): due delayed priority values move to
-- the ready set first (a bounded number), then the ready set's first
-- (highest level, earliest), then the destination list's head (the default
-- level). An expired value (message TTL) is not popped: it goes to the dead
-- letters with reason 'expired', or is dropped, and the pop goes on to the
-- next (at most DELAYQ_PRIORITY_EXPIRE_MAX of them a call).
-- KEYS: 1 priority ready set, 2 priority delayed set, 3 priority marker,
--       4 destination list, 5 dead-letter list, 6 dead-letter reasons
--       (list), 7 events config, 8 events stream (lib/events.lua: one
--       'expired' event per call that expires any), 9 stats hash (the
--       'expired' and 'dead_lettered' totals); without 5-9 (a run by hand
--       with older keys) nothing expires
-- ARGV: 1 how many values at most (1 to DELAYQ_POP_MAX; 1 when not given)
-- Returns {first value or false, its level (0: the list's), when the
-- delayed set's next value is due (ms) or false, its section
-- (lib/priority.lua: TTL header, headers) or false, 1 when it skipped as
-- many expired or foreign values as a call may (call again: the list's
-- values go after the ready set's) else 0, then for each further value:
-- value, level, section or false}, in take order.
--
-- Sent once, as an LPOP is: a second run would pop other values.
-- Cost: O(log m + n) for n values (ZRANGEs from the head, one
-- ZREMRANGEBYRANK), and at most DELAYQ_PRIORITY_MOVE values moved and
-- DELAYQ_PRIORITY_EXPIRE_MAX expired or moved aside.
local DELAYQ_POP_MAX = 250
local bad = delayq_check_types(KEYS[1], 'zset', KEYS[2], 'zset', KEYS[4], 'list')
if bad then return bad end
if KEYS[5] then
  bad = delayq_check_types(KEYS[5], 'list', KEYS[6], 'list')
  if bad then return bad end
end
local events, events_bad = delayq_events_open(KEYS[7], KEYS[8])
if events_bad then return events_bad end
local n = math.floor(math.max(1, math.min(tonumber(ARGV[1] or '1') or 1, DELAYQ_POP_MAX)))
local now = delayq_server_ms()
delayq_priority_due(KEYS[1], KEYS[2], KEYS[3], now)
local expiry = delayq_expiry_open(KEYS[5], KEYS[6], now)
-- value, level, section per value popped.
local popped = {}
-- Members not ours moved aside this call: bounded as expired ones are.
local foreign = 0
-- The ready set's first members are read in ranges and removed with one
-- ZREMRANGEBYRANK at the end (n ZPOPMINs cost Redis more): `used` of them
-- were delivered, expired or moved aside.
local used, refused = 0, false
while #popped < 3 * n and not delayq_expiry_full(expiry) and foreign < DELAYQ_PRIORITY_EXPIRE_MAX and not refused do
  local want = n - #popped / 3
  local members = redis.call('zrange', KEYS[1], used, used + want - 1)
  if #members == 0 then break end
  for _, member in ipairs(members) do
    if #popped >= 3 * n or delayq_expiry_full(expiry) or foreign >= DELAYQ_PRIORITY_EXPIRE_MAX then
      break
    end
    local level, header, element = delayq_priority_parse(member)
    local payload = level and delayq_payload(element)
    if not payload and KEYS[5] then
      -- Not one of ours (written by hand): kept where an operator sees it,
      -- as claim_batch.lua does, and the pop goes on.
      delayq_dead_letter(KEYS[5], KEYS[6], member, 'not a priority entry: moved from ' .. KEYS[1])
      foreign = foreign + 1
    elseif not payload then
      -- A run by hand without the dead-letter keys: left in place; refused
      -- if nothing was popped before it, else what was popped is answered.
      refused = true
      break
    elseif not delayq_expiry_take(expiry, header, payload) then
      popped[#popped + 1] = payload
      popped[#popped + 1] = level
      popped[#popped + 1] = header or false
    end
    used = used + 1
  end
  if #members < want then break end
end
if used > 0 then
  redis.call('zremrangebyrank', KEYS[1], 0, used - 1)
end
if refused and #popped == 0 then
  delayq_expiry_close(expiry, events, KEYS[8], KEYS[9])
  return redis.error_reply('DELAYQ_MALFORMED ' .. KEYS[1] .. ' holds a member that is not a priority entry')
end
delayq_expiry_close(expiry, events, KEYS[8], KEYS[9])
local stopped = delayq_expiry_full(expiry) or foreign >= DELAYQ_PRIORITY_EXPIRE_MAX
local left = n - #popped / 3
if left > 0 and not stopped then
  -- The list's values go after the ready set's.
  for _, value in ipairs(redis.call('lpop', KEYS[4], left) or {}) do
    popped[#popped + 1] = value
    popped[#popped + 1] = 0
    popped[#popped + 1] = false
  end
end
local reply = {popped[1] or false, popped[2] or 0, delayq_priority_next_due(KEYS[2]), popped[3] or false, stopped and 1 or 0}
for i = 4, #popped do
  reply[#reply + 1] = popped[i]
end
return reply
