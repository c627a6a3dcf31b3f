-- LIBS: element offer request events limits traces
-- offer_all: one chunk of a bulk offer (DelayedQueue::offer_all), leaving
-- what offer.lua leaves when its elements are offered one by one, in order:
-- the same members and scores, the same pending-list order; it publishes at
-- most once, when the timeout set's head is now one of its elements.
-- KEYS: 1 timeout set, 2 pending list, 3 channel, 4 request key of the whole
--       offer_all call (lib/request.lua): it counts the call's elements added,
--       5 events config, 6 events stream (lib/events.lua: one 'offered'
--       event per run that adds any, with the count it added, and one
--       'refused' when the limits stop it), 7 stats hash (the 'offered'
--       total: what the run added, never what the limits refused), 8 limits
--       hash (lib/limits.lua), 9 destination list (counted by 'max_size');
--       only with a trace context (feature `opentelemetry`): 10 trace
--       records, 11 trace expiry
-- ARGV: 1 index (0-based, in the call) of the chunk's first element, then
--       due_1, element_1, due_2, element_2, ... as offer.lua takes them (a due
--       time is ms since the epoch, or "+delay_ms" from the server's clock);
--       then, only with KEYS 10 and 11, the call's W3C trace context, stored
--       for each element this run adds (a resend adds none, so stores none)
-- Returns how many of the call's elements are added after this run; or,
-- when the queue's limits (lib/limits.lua) refuse one of its elements,
-- {that count, the refusal}: the elements before the refused one are added
-- (as offering them one by one would), none from it on. The request key
-- keeps the count only, so a resend checks the limits again.
--
-- A chunk adds its elements from that count on, and only once the count has
-- reached its first one: a resent or duplicated chunk adds nothing twice,
-- and chunks land in the call's order even if one arrives early (it changes
-- nothing; the client sends it again). At the first element whose packed
-- bytes are pending already or repeat one of the chunk's (a random-id
-- collision, as offer.lua reports), it stops: the count is then that
-- element's index, and the client re-packs it and sends the rest again.
local trace = KEYS[11] and table.remove(ARGV)
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
local events, events_bad = delayq_events_open(KEYS[5], KEYS[6])
if events_bad then return events_bad end
bad = trace and delayq_check_types(KEYS[10], 'hash', KEYS[11], 'zset')
if bad then return bad end
local limits, limits_bad = delayq_limits_open(KEYS[8])
if limits_bad then return limits_bad end
-- The chunk's elements from the first not added yet; their due times are
-- resolved in place, so that ARGV from there on is ZADD's argument list.
local from = 2 * (done - first) + 2
local elements, m = {}, 0
for i = from, #ARGV, 2 do
  if string.byte(ARGV[i], 1) == 43 then -- '+delay_ms'
    ARGV[i] = delayq_due(ARGV[i])
  end
  m = m + 1
  elements[m] = ARGV[i + 1]
end
-- Those before the first collision with a pending element or a repeat
-- inside the chunk are added.
local n, position = delayq_clear_prefix(KEYS[1], elements)
local admitted, refusal = delayq_admit(limits, KEYS[1], KEYS[9], elements)
if admitted > n then
  refusal = nil -- a collision comes first: the client re-packs and resends
else
  n = admitted
end
delayq_offer_pairs(KEYS[1], KEYS[2], KEYS[3], ARGV, from, elements, n, position)
if n > 0 then delayq_event(events, KEYS[6], 'offered', 'count', n) end
delayq_count(KEYS[7], 'offered', n)
if trace and n > 0 then
  local added, dues = {}, {}
  for k = 1, n do
    added[k], dues[k] = elements[k], ARGV[from + 2 * (k - 1)]
  end
  delayq_traces_put_elements(KEYS[10], KEYS[11], trace, added, dues)
end
if refusal then
  delayq_event(events, KEYS[6], 'refused', 'count', m - n, 'reason', delayq_refusal_reason(refusal))
  return {delayq_answer(KEYS[4], done + n), refusal}
end
return delayq_answer(KEYS[4], done + n)
