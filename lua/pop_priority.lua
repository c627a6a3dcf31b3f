-- LIBS: element priority
-- pop_priority: pop the first value of a queue that has priorities
-- (lib/priority.lua): due delayed priority values move to the ready set
-- first (a bounded number), then the ready set's first (highest level,
-- earliest), else the destination list's head (the default level).
-- KEYS: 1 priority ready set, 2 priority delayed set, 3 priority marker,
--       4 destination list
-- ARGV: none
-- Returns {value or false, its level (0: the list's), when the delayed set's
-- next value is due (ms) or false}.
--
-- Sent once, as an LPOP is: a second run would pop another value.
-- Cost: O(log n), and at most DELAYQ_PRIORITY_MOVE values moved.
local bad = delayq_check_types(KEYS[1], 'zset', KEYS[2], 'zset', KEYS[4], 'list')
if bad then return bad end
local now = delayq_server_ms()
delayq_priority_due(KEYS[1], KEYS[2], KEYS[3], now)
while true do
  local top = redis.call('zpopmin', KEYS[1])
  local member = top[1]
  if not member then break end
  local level = delayq_priority_level(member)
  local payload = level and delayq_payload(string.sub(member, 2))
  if payload then
    return {payload, level, delayq_priority_next_due(KEYS[2])}
  end
  -- Not one of ours (written by hand): refused, and put back where it was.
  redis.call('zadd', KEYS[1], top[2], member)
  return redis.error_reply('DELAYQ_MALFORMED ' .. KEYS[1] .. ' holds a member that is not a priority entry')
end
return {redis.call('lpop', KEYS[4]) or false, 0, delayq_priority_next_due(KEYS[2])}
