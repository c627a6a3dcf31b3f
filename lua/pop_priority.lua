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
local taken, stopped, refused = delayq_priority_take(KEYS[1], n, expiry, KEYS[5], KEYS[6], function(payload, level, section)
  popped[#popped + 1] = payload
  popped[#popped + 1] = level
  popped[#popped + 1] = section or false
end)
delayq_expiry_close(expiry, events, KEYS[8], KEYS[9])
if refused and taken == 0 then
  -- A run by hand without the dead-letter keys met a member not ours.
  return redis.error_reply('DELAYQ_MALFORMED ' .. KEYS[1] .. ' holds a member that is not a priority entry')
end
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
