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
local earliest
for i = #ARGV - 1, 1, -2 do
  if ARGV[i] ~= '' then
    redis.call('zadd', KEYS[2], ARGV[i], ARGV[i + 1])
    if not earliest or tonumber(ARGV[i]) < tonumber(earliest) then
      earliest = ARGV[i]
    end
  end
  redis.call('lpush', KEYS[1], ARGV[i + 1])
end
delayq_publish_if_head(KEYS[2], KEYS[3], earliest)
return delayq_answer(KEYS[4], #ARGV / 2)
