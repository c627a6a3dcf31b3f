-- LIBS: element offer request ids
-- pending_page: one page of the pending elements in due order, each with the
-- id it was offered under (DelayedQueue::pending_page; the CLI's inspect).
-- KEYS: 1 timeout set, 2 id index
-- ARGV: 1 start (0-based rank in due order), 2 count (the caller caps it)
-- Returns {element, due ms, id or false, element, ...}. Reads only: O(log n +
-- count) whatever the queue's size.
local bad = delayq_check_types(KEYS[1], 'zset', KEYS[2], 'hash')
if bad then return bad end
local start = tonumber(ARGV[1])
local page = redis.call('zrange', KEYS[1], start, start + tonumber(ARGV[2]) - 1, 'WITHSCORES')
local indexed = redis.call('exists', KEYS[2]) == 1
local out = {}
for i = 1, #page, 2 do
  local element, id = page[i], false
  local field = indexed and delayq_element_id(element)
  local entry = field and redis.call('hget', KEYS[2], field)
  if entry then
    local indexed_element, name = delayq_id_element(entry)
    if indexed_element == element then
      id = name
    end
  end
  out[#out + 1] = element
  out[#out + 1] = page[i + 1]
  out[#out + 1] = id
end
return out
