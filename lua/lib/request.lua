
-- Requests that may be resent (src/request.rs). fred sends a command again
-- when its connection drops before the reply arrived, and the first send may
-- have run: a drain run twice would remove twice as much, a give-back run
-- twice would push a value twice. Such scripts take a request key of their
-- own (delayq_request:{N}:<id>, in the queue's slot) as their last KEY: the
-- first run stores its reply there, a resend gets the stored reply and
-- changes nothing, and a request the client gave up on is marked cancelled
-- (lua/cancel_request.lua) so that a late first run does nothing either.
local DELAYQ_REQUEST_TTL_MS = 3600000

-- The reply a request already got, or nil if it has not run. A cancelled
-- request answers an error.
local function delayq_replayed(key)
  local stored = redis.call('get', key)
  if not stored then
    return nil
  end
  local record = cmsgpack.unpack(stored)
  if record[1] == 'cancelled' then
    return redis.error_reply('DELAYQ_CANCELLED the client gave this request up')
  end
  return record[2]
end

-- Stores and returns a request's reply. undo (optional) lists what puts
-- back what the request removed, if its client never sees the reply: steps
-- {command, index of its KEY, arguments} run by lua/cancel_request.lua.
local function delayq_answer(key, reply, undo)
  redis.call('set', key, cmsgpack.pack({'done', reply, undo or {}}), 'PX', DELAYQ_REQUEST_TTL_MS)
  return reply
end

-- Publishes `score` on the queue's channel when it is the timeout set's head
-- (the earliest due time), as an offer does, so transfers wake for it.
local function delayq_publish_if_head(timeout, channel, score)
  if not score then
    return
  end
  local head = redis.call('zrange', timeout, 0, 0, 'WITHSCORES')
  if head[2] and tonumber(head[2]) == tonumber(score) then
    redis.call('publish', channel, head[2])
  end
end

-- Undo steps that put polled elements back at the head of the pending list
-- (pending, timeout and channel are KEY indices) with their scores, and wake
-- transfers for the earliest of them.
local function delayq_restore_steps(pending, timeout, channel, elements, scores)
  if #elements == 0 then
    return {}
  end
  local pairs_, back = {}, {}
  local earliest
  for i = #elements, 1, -1 do
    back[#back + 1] = elements[i]
    if scores[i] then
      pairs_[#pairs_ + 1] = scores[i]
      pairs_[#pairs_ + 1] = elements[i]
      if not earliest or tonumber(scores[i]) < tonumber(earliest) then
        earliest = scores[i]
      end
    end
  end
  local steps = {}
  if #pairs_ > 0 then
    steps[#steps + 1] = {'zadd', timeout, pairs_}
  end
  steps[#steps + 1] = {'lpush', pending, back}
  if earliest then
    steps[#steps + 1] = {'publish', channel, {earliest}}
  end
  return steps
end
