-- LIBS: element offer request ids
-- restore: put polled elements back at the head of the pending list with
-- their scores, when the client could not decode them or the caller that
-- polled them is gone (nothing is lost).
-- KEYS: 1 pending list, 2 timeout set, 3 channel, 4 id index,
--       5 request key (lib/request.lua)
-- ARGV: score_1, element_1, id_1, score_2, element_2, id_2, ... in their
-- original order (an empty score: the element had none and goes back to the
-- list only; an empty id: it had none). An element goes back under the id
-- it left with (lib/ids.lua: delayq_restore_indexed).
-- Returns how many elements went back. If a restored element is now the
-- queue's head, its due time is published as an offer of it would be
-- (lib/offer.lua), so transfers wake for it (it may be overdue already).
local replayed = delayq_replayed(KEYS[5])
if replayed then return replayed end
local bad = delayq_check_types(KEYS[1], 'list', KEYS[2], 'zset', KEYS[4], 'hash')
if bad then return bad end
local elements, scores, taken = {}, {}, {}
for i = 1, #ARGV - 2, 3 do
  scores[#scores + 1] = ARGV[i] ~= '' and ARGV[i]
  elements[#elements + 1] = ARGV[i + 1]
  taken[#taken + 1] = ARGV[i + 2] ~= '' and ARGV[i + 2]
end
return delayq_answer(KEYS[5], delayq_restore_indexed(KEYS[1], KEYS[2], KEYS[3], KEYS[4], elements, scores, taken))
