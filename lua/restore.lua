-- restore: put polled elements back at the head of the pending list with
-- their scores, when the client could not decode them (nothing is lost).
-- KEYS: 1 pending list, 2 timeout set
-- ARGV: score_1, element_1, score_2, element_2, ... in their original order
-- (an empty score: the element had none and goes back to the list only).
local bad = delayq_check_types(KEYS[1], 'list', KEYS[2], 'zset')
if bad then return bad end
for i = #ARGV - 1, 1, -2 do
  if ARGV[i] ~= '' then
    redis.call('zadd', KEYS[2], ARGV[i], ARGV[i + 1])
  end
  redis.call('lpush', KEYS[1], ARGV[i + 1])
end
return #ARGV / 2
