-- LIBS: element offer request priority
-- priority_push_back: give popped values back to the head of their level
-- (a take that stopped waiting, a value that did not decode), the first
-- given first (lib/priority.lua; level 0 is the destination list's head).
-- KEYS: 1 priority ready set, 2 priority marker, 3 destination list, 4
--       request key (lib/request.lua: a resend answers the first run's reply
--       and pushes nothing twice)
-- ARGV: 1 the level (0-9), then the values
-- Returns how many it pushed.
local bad = delayq_check_types(KEYS[1], 'zset', KEYS[3], 'list')
if bad then return bad end
local replayed = delayq_replayed(KEYS[4])
if replayed then return replayed end
local level = tonumber(ARGV[1])
local values = {}
for i = 2, #ARGV do
  values[#values + 1] = ARGV[i]
end
delayq_priority_give_back(KEYS[1], KEYS[2], KEYS[3], level, values)
return delayq_answer(KEYS[4], #values)
