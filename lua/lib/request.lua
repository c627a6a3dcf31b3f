
-- Requests that may be resent (src/connection/request.rs). fred sends a command again
-- when its connection drops before the reply arrived, and the first send may
-- have run: a drain run twice would remove twice as much, a give-back run
-- twice would push a value twice. Such scripts take a request key of their
-- own (delayq_request:{N}:<id>, in the queue's slot) as their last KEY: the
-- first run stores its reply there, a resend gets the stored reply and
-- changes nothing, and a request the client gave up on is marked cancelled
-- (lua/cancel_request.lua) so that a late first run does nothing either.
-- A record that can still put values back lives a day (an outage that
-- long can still be undone); one that only answers resends, an hour. A
-- record whose reply was read becomes a 'consumed' mark (src/connection/request.rs);
-- a cancelled one is {'cancelled', what the cancel found} (older clients
-- wrote {'cancelled'}).
local DELAYQ_REQUEST_TTL_MS = 3600000
local DELAYQ_UNDO_TTL_MS = 86400000

-- The reply a request already got, or nil if it has not run. A cancelled
-- or consumed request answers an error and does nothing.
local function delayq_replayed(key)
  local stored = redis.call('get', key)
  if not stored then
    return nil
  end
  local record = cmsgpack.unpack(stored)
  if record[1] == 'cancelled' then
    return redis.error_reply('DELAYQ_CANCELLED the client gave this request up')
  end
  if record[1] == 'consumed' then
    return redis.error_reply('DELAYQ_CONSUMED this request was answered already')
  end
  return record[2]
end

-- Stores and returns a request's reply. undo (optional) says how
-- lua/cancel_request.lua puts back what the request removed if its client
-- never sees the reply, by KEY indices of the request:
--   {'lpush', list}: the reply's values, back at the list's head in order;
--   {'restore', pending, timeout, channel[, elements, scores[, ids,
--     taken]]}: packed elements back at the pending list's head with their
--     scores (the reply's first two fields unless given), and indexed again
--     in the id index `ids` under the ids they left with (`taken`, else the
--     reply's fourth field; lib/ids.lua: delayq_restore_indexed).
local function delayq_answer(key, reply, undo)
  local ttl = DELAYQ_REQUEST_TTL_MS
  if undo then
    ttl = DELAYQ_UNDO_TTL_MS
  end
  redis.call('set', key, cmsgpack.pack({'done', reply, undo or false}), 'PX', ttl)
  return reply
end

-- Puts packed elements back at the head of the pending list in their
-- order, each with its score (false: none, the list only), and wakes
-- transfers if one of them is now the head (it may be overdue), as an offer
-- of it would (lib/offer.lua).
local function delayq_restore(pending, timeout, channel, elements, scores)
  local due_of = {}
  for i = #elements, 1, -1 do
    if scores[i] then
      redis.call('zadd', timeout, scores[i], elements[i])
      due_of[elements[i]] = scores[i]
    end
    redis.call('lpush', pending, elements[i])
  end
  delayq_publish_new_head(timeout, channel, due_of)
  return #elements
end

-- Runs along a lane (src/connection/request.rs: Lane). A transfer, a sweep
-- window or a reap is harmless to run twice, but a resend answers only what
-- it did itself, and the counts of the first run are lost. They run far too
-- often for a request key each, so a client numbers its runs along a lane,
-- one run at a time per queue, and a run that changed something leaves its
-- reply in the lane's record for the queue (delayq_runs:{N}:<lane>, one
-- STRING, replaced by the lane's next such run; it expires after
-- DELAYQ_RUN_TTL_MS). A resend finds its own run there and answers that;
-- one whose first run changed nothing (or never ran) finds none and runs.
local DELAYQ_RUN_TTL_MS = 60000

-- The reply the run `id` of the lane whose record is `record` already got,
-- or nil. A copy of a run older than the lane's last recorded one (its
-- client has moved on and reads no reply) answers an error and does nothing.
-- The record is the run's id, a space and the reply packed: only a resend
-- unpacks it.
local function delayq_run_replayed(record, id)
  local stored = redis.call('get', record)
  if not stored then
    return nil
  end
  local space = string.find(stored, ' ', 1, true)
  local last, mine = tonumber(string.sub(stored, 1, space - 1)), tonumber(id)
  if last == mine then
    return cmsgpack.unpack(string.sub(stored, space + 1))
  end
  if last > mine then
    return redis.error_reply('DELAYQ_STALE a later run of this lane has run')
  end
  return nil
end

-- Returns the run's reply, kept in the lane's record when the run changed
-- something (a run that changed nothing answers a resend by running again).
local function delayq_run_answer(record, id, reply, changed)
  if changed then
    redis.call('set', record, id .. ' ' .. cmsgpack.pack(reply), 'PX', DELAYQ_RUN_TTL_MS)
  end
  return reply
end
