-- LIBS: element offer request ids events
-- pending_element: act on one exact pending element, named by its packed
-- bytes (DelayedQueue::delete_element, run_element_now, reschedule_element;
-- the dashboard's per-element actions). Elements offered without a delayq id
-- have no other name; an element whose bytes are no longer in the timeout
-- set is gone (a transfer took it, or it was removed), and nothing changes:
-- another element is never acted on.
-- KEYS: 1 timeout set, 2 pending list, 3 destination list, 4 channel,
--       5 id index, 6 pause flag, 7 events config, 8 events stream
--       (lib/events.lua: 'cancelled', 'transferred' or 'rescheduled' when
--       done), 9 request key (lib/request.lua: a resend answers as the first
--       run did and acts on nothing twice)
-- ARGV: 1 action: 'delete' (as Redisson's remove does to both keys), 'run'
--       (to the destination now, as a transfer moves it) or 'reschedule',
--       2 the packed element, 3 reschedule: the due time (ms since the
--       epoch, or "+delay_ms" from the server's clock)
-- Returns {'done', due ms}, {'gone'}, {'copies', n} (byte-identical copies in
-- the pending list: a reschedule would move them all, so it is refused),
-- {'paused'} (run: nothing moves while the queue is paused) or
-- {'malformed'} (run: no format unpacks it, so there is no payload to deliver).
--
-- Cost: a score lookup, and for delete and run one removal from the pending
-- list (lib/ids.lua: delayq_pending_remove, at most one scan as Java's
-- remove). Byte-identical copies exist only in the legacy layout (an
-- element of Redisson before 3.21.1 whose id was its due time: equal payload
-- and due time, equal bytes): for those, one more LPOS counts up to two
-- copies. Delete and run then take one copy and leave the timeout set's
-- member to the other, so exactly one element is acted on.
local replayed = delayq_replayed(KEYS[9])
if replayed then return replayed end
local bad = delayq_check_types(KEYS[1], 'zset', KEYS[2], 'list', KEYS[3], 'list', KEYS[5], 'hash')
if bad then return bad end
local events, events_bad = delayq_events_open(KEYS[7], KEYS[8])
if events_bad then return events_bad end
local action, element = ARGV[1], ARGV[2]
if action ~= 'delete' and action ~= 'run' and action ~= 'reschedule' then
  return redis.error_reply('ERR pending_element: unknown action ' .. action)
end
local score = redis.call('zscore', KEYS[1], element)
if not score then
  return delayq_answer(KEYS[9], {'gone'})
end
local payload, format = delayq_payload(element)
local copies = 1
if format ~= 'modern' then
  copies = #redis.call('lpos', KEYS[2], element, 'COUNT', 2, 'MAXLEN', 0)
end
if action == 'reschedule' then
  if copies > 1 then
    return delayq_answer(KEYS[9], {'copies', copies})
  end
  local due = delayq_due(ARGV[3])
  redis.call('zadd', KEYS[1], 'XX', due, element)
  delayq_publish_new_head(KEYS[1], KEYS[4], {[element] = due})
  delayq_event(events, KEYS[8], 'rescheduled', 'due_ms', due)
  return delayq_answer(KEYS[9], {'done', due})
end
if action == 'run' then
  if redis.call('exists', KEYS[6]) == 1 then
    return delayq_answer(KEYS[9], {'paused'})
  end
  if not payload then
    return delayq_answer(KEYS[9], {'malformed'})
  end
  redis.call('rpush', KEYS[3], payload)
end
if copies > 0 then
  delayq_pending_remove(KEYS[2], element)
end
if copies < 2 then
  redis.call('zrem', KEYS[1], element)
  delayq_ids_forget(KEYS[5], {element})
end
if action == 'run' then
  delayq_event(events, KEYS[8], 'transferred', 'count', 1, 'quarantined', 0)
else
  delayq_event(events, KEYS[8], 'cancelled', 'count', 1)
end
return delayq_answer(KEYS[9], {'done', score})
