-- Redisson's offer step (WIRE.md: offer), the one place a script schedules
-- elements and wakes transfers: ZADD each element with its due time, RPUSH
-- it to the pending list, and publish the due time on the queue's channel
-- when an element is the new head of the timeout set (ZRANGE 0 0 is that
-- element: a tie with an element that sorts first is no new head). Every
-- script that schedules an element (offer, offer_all, offer_id,
-- reschedule_id, schedule_fire, nack, and the give-backs of
-- lib/request.lua) and resume publish through here, and nowhere else.

-- The due time a script argument names, as ZADD takes it and PUBLISH sends
-- it: the argument itself (ms since the epoch, from the client), or for
-- "+delay_ms" the Redis server's clock plus the delay, read once per run
-- (every element of a run counts from the same now) and written as a
-- whole number, as Java's LongCodec writes a due time.
local delayq_due_now
local function delayq_due(arg)
  if string.byte(arg, 1) ~= 43 then -- '+'
    return arg
  end
  delayq_due_now = delayq_due_now or delayq_server_ms()
  return string.format('%d', delayq_due_now + tonumber(string.sub(arg, 2)))
end

-- The positions (ascending) of the elements that are pending already or
-- repeat an earlier one of them: random-id collisions, which ZADD would
-- turn into a changed score instead of a new element. One ZMSCORE per
-- 4,000 (unpack's limit).
local function delayq_collisions(timeout, elements)
  local found, seen = {}, {}
  for i = 1, #elements, 4000 do
    local scores = redis.call('zmscore', timeout, unpack(elements, i, math.min(i + 3999, #elements)))
    for k = 1, #scores do
      local e = elements[i + k - 1]
      if scores[k] or seen[e] then
        found[#found + 1] = i + k - 1
      end
      seen[e] = true
    end
  end
  return found
end

-- How many of the elements come before the first that is pending already
-- or repeats an earlier one (a random-id collision), and each of those
-- elements' position. One ZMSCORE per 4,000, none past the collision.
local function delayq_clear_prefix(timeout, elements)
  local position = {}
  for i = 1, #elements, 4000 do
    local scores = redis.call('zmscore', timeout, unpack(elements, i, math.min(i + 3999, #elements)))
    for k = 1, #scores do
      local at = i + k - 1
      local e = elements[at]
      if scores[k] or position[e] then
        return at - 1, position
      end
      position[e] = at
    end
  end
  return #elements, position
end

-- Publishes due_of[head] when the timeout set's head is one of the elements
-- due_of maps to the due time they were just given (as ZADD got it).
local function delayq_publish_new_head(timeout, channel, due_of)
  local head = redis.call('zrange', timeout, 0, 0)[1]
  local due = head and due_of[head]
  if due then
    redis.call('publish', channel, due)
  end
end

-- Offers elements, none pending and no two equal (delayq_collisions finds
-- those), each due at dues[i] (as ZADD takes it): in bulk, one ZADD per
-- 2,000 and one RPUSH per 4,000, leaving what offering them one by one in
-- order leaves, with at most one publish.
local function delayq_offer(timeout, pending, channel, dues, elements)
  if #elements == 0 then
    return
  end
  local zadd, due_of = {}, {}
  for i = 1, #elements do
    zadd[2 * i - 1], zadd[2 * i] = dues[i], elements[i]
    due_of[elements[i]] = dues[i]
  end
  delayq_call_chunked('zadd', timeout, zadd)
  delayq_call_chunked('rpush', pending, elements)
  delayq_publish_new_head(timeout, channel, due_of)
end

-- Publishes the head's due time whatever the head is, as an offer of it
-- would (a resume: transfers held by a pause wake and move what fell due).
local function delayq_publish_head(timeout, channel)
  local head = redis.call('zrange', timeout, 0, 0, 'WITHSCORES')
  if head[2] then
    redis.call('publish', channel, head[2])
  end
end

-- delayq_offer for arguments that already alternate due time (as ZADD
-- takes it) and element, as offer_all gets them: the first n pairs from
-- args[from], elements[k] being the k-th pair's element and position (from
-- delayq_clear_prefix) each one's k. ZADD and RPUSH take slices of the
-- arguments as they are: no table is built per element.
local function delayq_offer_pairs(timeout, pending, channel, args, from, elements, n, position)
  if n == 0 then
    return
  end
  local last = from + 2 * n - 1
  for i = from, last, 4000 do
    redis.call('zadd', timeout, unpack(args, i, math.min(i + 3999, last)))
  end
  for i = 1, n, 4000 do
    redis.call('rpush', pending, unpack(elements, i, math.min(i + 3999, n)))
  end
  local head = redis.call('zrange', timeout, 0, 0)[1]
  local at = head and position[head]
  if at and at <= n then
    redis.call('publish', channel, args[from + 2 * (at - 1)])
  end
end
