-- LIBS: element offer request
-- push_back: put values back at the head of a list in their original order
-- (values popped for a caller that is gone, or that did not decode).
-- KEYS: 1 list, 2 request key (lib/request.lua: a resend pushes nothing twice)
-- ARGV: the values, first first
-- Returns how many were pushed.
local replayed = delayq_replayed(KEYS[2])
if replayed then return replayed end
local bad = delayq_check_types(KEYS[1], 'list')
if bad then return bad end
local back = {}
for i = #ARGV, 1, -1 do
  back[#back + 1] = ARGV[i]
end
delayq_call_chunked('lpush', KEYS[1], back)
return delayq_answer(KEYS[2], #ARGV)
