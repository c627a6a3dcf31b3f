-- LIBS: element
-- partitions_retire: drops drained retired partitions from the layout
-- (Client::retire_partitions), so takes and workers stop reading them.
-- KEYS: 1 partitions hash (delayq_partitions, in the logical queue's slot)
-- ARGV: 1 the names to drop one a line (sealed and seen empty by the
--       caller; a re-partition since only adds to the retired names)
-- Returns {'retired', retired names left one a line} (names already gone
-- are skipped: a resend answers the same); {'missing', ''} when no layout
-- is stored. Cost: O(retired names), capped (MAX_RETIRED).
local bad = delayq_check_types(KEYS[1], 'hash')
if bad then return bad end
local stored = redis.call('hmget', KEYS[1], 'count', 'generation', 'retired')
if not stored[1] then
  return {'missing', ''}
end
local drop = {}
for name in string.gmatch(ARGV[1], '[^\n]+') do
  drop[name] = true
end
local left = {}
for name in string.gmatch(stored[3] or '', '[^\n]+') do
  if not drop[name] then
    left[#left + 1] = name
  end
end
local joined = table.concat(left, '\n')
redis.call('hset', KEYS[1], 'retired', joined)
return {'retired', joined}
