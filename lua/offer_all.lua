-- offer_all: one chunk of a bulk offer (DelayedQueue::offer_all), leaving
-- what offer.lua leaves when its elements are offered one by one, in order:
-- the same members and scores, the same pending-list order; it publishes at
-- most once, when the timeout set's head is now one of its elements.
-- KEYS: 1 timeout set, 2 pending list, 3 channel, 4 request key of the whole
--       offer_all call (lib/request.lua): it counts the call's elements added
-- ARGV: 1 index (0-based, in the call) of the chunk's first element, then
--       due_1, element_1, due_2, element_2, ... as offer.lua takes them (a due
--       time is ms since the epoch, or "+delay_ms" from the server's clock)
-- Returns how many of the call's elements are added after this run.
--
-- A chunk adds its elements from that count on, and only once the count has
-- reached its first one: a resent or duplicated chunk adds nothing twice,
-- and chunks land in the call's order even if one arrives early (it changes
-- nothing; the client sends it again). At the first element whose packed
-- bytes are pending already or repeat one of the chunk's (a random-id
-- collision, as offer.lua reports), it stops: the count is then that
-- element's index, and the client re-packs it and sends the rest again.
local done = delayq_replayed(KEYS[4])
if type(done) == 'table' then return done end -- the client gave the call up
done = tonumber(done or 0)
local first = tonumber(ARGV[1])
local count = (#ARGV - 1) / 2
if done < first or done >= first + count then
  return done
end
local bad = delayq_check_types(KEYS[1], 'zset', KEYS[2], 'list')
if bad then return bad end
local skip = done - first
local elements = {}
for j = skip + 1, count do
  elements[#elements + 1] = ARGV[2 * j + 1]
end
-- One ZMSCORE per 4,000 (unpack's limit) finds collisions with pending
-- elements; `seen` (element -> its place), repeats inside the chunk. Those
-- before the first collision are added.
local seen = {}
local n = #elements
for i = 1, #elements, 4000 do
  local scores = redis.call('zmscore', KEYS[1], unpack(elements, i, math.min(i + 3999, #elements)))
  for k = 1, #scores do
    local e = elements[i + k - 1]
    if scores[k] or seen[e] then
      n = i + k - 2
      break
    end
    seen[e] = i + k - 1
  end
  if n < #elements then break end
end
for k = #elements, n + 1, -1 do
  elements[k] = nil
end
local zadd = {}
local server_now
for k = 1, n do
  local due = ARGV[2 * (skip + k)]
  if string.sub(due, 1, 1) == '+' then
    server_now = server_now or delayq_server_ms()
    due = tostring(server_now + tonumber(string.sub(due, 2)))
  end
  zadd[2 * k - 1] = due
  zadd[2 * k] = elements[k]
end
-- None is a member (checked above), so a plain ZADD adds each, as ZADD NX would.
delayq_call_chunked('zadd', KEYS[1], zadd)
delayq_call_chunked('rpush', KEYS[2], elements)
if n > 0 then
  local head = redis.call('zrange', KEYS[1], 0, 0)[1]
  local k = head and seen[head]
  if k then
    redis.call('publish', KEYS[3], zadd[2 * k - 1])
  end
end
return delayq_answer(KEYS[4], done + n)
