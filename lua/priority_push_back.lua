-- LIBS: element offer request events priority
-- priority_push_back: give popped values back to the head of their level
-- (a take that stopped waiting, a value that did not decode), the first
-- given first (lib/priority.lua; level 0 is the destination list's head).
-- KEYS: 1 priority ready set, 2 priority marker, 3 destination list, 4
--       request key (lib/request.lua: a resend answers the first run's reply
--       and pushes nothing twice)
-- ARGV: 1 the level (0-9), followed by the values' section (a TTL
--       header, headers, or both) when they have one (lib/priority.lua: then they go back to the ready set,
--       level 0 included, with it), then the values
-- Returns how many it pushed.
local bad = delayq_check_types(KEYS[1], 'zset', KEYS[3], 'list')
if bad then return bad end
local replayed = delayq_replayed(KEYS[4])
if replayed then return replayed end
local level = tonumber(string.sub(ARGV[1], 1, 1))
local header = string.sub(ARGV[1], 2)
if not level or (header ~= '' and not delayq_section_ok(header)) then
  return redis.error_reply('DELAYQ_ARGS a level is 0-9 and an optional section (TTL header, headers), not ' .. ARGV[1])
end
local values, headers = {}, {}
for i = 2, #ARGV do
  values[#values + 1] = ARGV[i]
  headers[#values] = header ~= '' and header or false
end
delayq_priority_give_back(KEYS[1], KEYS[2], KEYS[3], level, values, headers)
return delayq_answer(KEYS[4], #values)
