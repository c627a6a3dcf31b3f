-- LIBS: element
-- partitions_create: store a partitioned queue's layout once
-- (Client::create_partitioned_queue; wire/partitions.rs says what it holds).
-- KEYS: 1 partitions hash (delayq_partitions, in the logical queue's slot),
--       2 destination list, 3 timeout set, 4 pending list (Redisson's
--       keys of a plain queue of the logical name: one holding values is
--       not hidden behind a layout)
-- ARGV: 1 partition count, 2 partition names one a line, 3 created ms,
--       4 layout version, 5 key hash name
-- Returns {'created', count, names, created} when it stored the layout,
-- {'exists', count, names, created} when one with this count was there (a
-- resend after a lost reply answers so, with the same names), and
-- {'mismatch', count, names, created} with the stored count when it holds
-- another: nothing is changed then; {'occupied', '0', '', '0'} when no
-- layout is stored and a plain queue of that name holds values (its
-- producers may still write there; a partitioned take never reads it).
-- Cost: O(1).
local bad = delayq_check_types(KEYS[1], 'hash')
if bad then return bad end
local stored = redis.call('hmget', KEYS[1], 'count', 'names', 'created')
if stored[1] then
  local answer = 'exists'
  if stored[1] ~= ARGV[1] then
    answer = 'mismatch'
  end
  return {answer, stored[1], stored[2] or '', stored[3] or '0'}
end
if redis.call('exists', KEYS[2], KEYS[3], KEYS[4]) > 0 then
  return {'occupied', '0', '', '0'}
end
redis.call('hset', KEYS[1], 'version', ARGV[4], 'count', ARGV[1], 'names', ARGV[2],
  'hash', ARGV[5], 'created', ARGV[3])
return {'created', ARGV[1], ARGV[2], ARGV[3]}
