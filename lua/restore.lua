-- restore: put polled elements back at the head of the pending list with
-- their scores, when the client could not decode them or the caller that
-- polled them is gone (nothing is lost).
-- KEYS: 1 pending list, 2 timeout set, 3 channel, 4 request key (lib/request.lua)
-- ARGV: score_1, element_1, score_2, element_2, ... in their original order
-- (an empty score: the element had none and goes back to the list only).
-- Returns how many elements went back. If the earliest restored due time is
-- now the queue's head, it is published as an offer would, so transfers
-- wake for it (it may be overdue already).
local replayed = delayq_replayed(KEYS[4])
if replayed then return replayed end
local bad = delayq_check_types(KEYS[1], 'list', KEYS[2], 'zset')
if bad then return bad end
local elements, scores = {}, {}
for i = 1, #ARGV - 1, 2 do
  scores[#scores + 1] = ARGV[i] ~= '' and ARGV[i]
  elements[#elements + 1] = ARGV[i + 1]
end
return delayq_answer(KEYS[4], delayq_restore(KEYS[1], KEYS[2], KEYS[3], elements, scores))
