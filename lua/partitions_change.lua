-- LIBS: element
-- partitions_change: a re-partition's new generation (Client::repartition;
-- wire/partitions.rs says what the layout holds).
-- KEYS: 1 partitions hash (delayq_partitions, in the logical queue's slot)
-- ARGV: 1 the generation the caller read, 2 the new count, 3 the new
--       names one a line, 4 the retired names one a line (the old ones
--       added), 5 the new generation, 6 now in ms
-- Returns {'changed', generation} when it stored the new generation, or
-- found it stored with these names (a resend after a lost reply, or
-- another client's identical change: the names follow from the count and
-- the generation); {'moved', generation} when another change came first
-- (nothing is changed: read the layout again); {'missing', '0'} when no
-- layout is stored. Cost: O(names), capped by the partition counts.
local bad = delayq_check_types(KEYS[1], 'hash')
if bad then return bad end
local stored = redis.call('hmget', KEYS[1], 'count', 'names', 'generation')
if not stored[1] then
  return {'missing', '0'}
end
local generation = tonumber(stored[3] or '1')
if generation == tonumber(ARGV[5]) and stored[2] == ARGV[3] then
  return {'changed', ARGV[5]}
end
if generation ~= tonumber(ARGV[1]) then
  return {'moved', tostring(generation)}
end
redis.call('hset', KEYS[1], 'count', ARGV[2], 'names', ARGV[3], 'retired', ARGV[4],
  'generation', ARGV[5], 'changed', ARGV[6])
return {'changed', ARGV[5]}
