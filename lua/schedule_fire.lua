-- LIBS: element offer events schedules
-- schedule_fire: offer the due occurrences of one schedule, exactly once
-- however many processes run it (a compare-and-set on its next occurrence).
-- KEYS: 1 schedules hash, 2 timeout set, 3 pending list, 4 channel, 5 events
--       config, 6 events stream (lib/events.lua: one 'schedule_fired' event
--       per call that offers, with the schedule and the count), 7 schedule
--       fires (lib/schedules.lua: each call that moves the schedule on
--       adds one entry), 8 stats hash (lib/events.lua: the 'offered' total)
-- ARGV: 1 name, 2 rev, 3 next_ms the caller read, 4 the next occurrence after
--       what it fires, 5 occurrences it skips (misfire policy), 6 this call's
--       token (random, from the client), 7 the runner's id, 8 its host, 9
--       'on_time' | 'late' (an occurrence it offers is past the misfire
--       window: the policy fires it late), then due_1, element_1, due_2,
--       element_2, ... (elements packed by the client in the queue's format;
--       each due is an occurrence, ms since the epoch)
-- Returns {'fired', record} | {'stale', record} | {'gone'} | {'early', now_ms} | {'collision'}.
--
-- Only when the stored record still has the caller's rev and next_ms, is not
-- paused, and every occurrence is due on the Redis server's clock: offer
-- each element as offer.lua (Redisson's offer) does (lib/offer.lua), then
-- store the next occurrence. Anyone else who computed the same occurrences
-- finds next_ms moved and offers nothing. A rev is never given twice for a
-- name (schedule_save.lua), so a record removed and added again fails the
-- check too.
--
-- fred resends this call when its reply is lost, and the first run may have
-- fired: the record keeps the tokens of its last FIRES_KEPT fires, and a
-- resend that finds its own answers 'fired' (with the record as it is now)
-- and offers nothing again, so the caller counts what it offered; the fire
-- history too is written only by the run that fires. The client sends at
-- most 100 elements per call.
local FIRES_KEPT = 8
local FIRST = 10
if #ARGV > FIRST - 1 + 2 * 100 then
  return redis.error_reply('ERR delayq: schedule_fire offers at most 100 occurrences per call')
end
local bad = delayq_check_types(KEYS[1], 'hash', KEYS[2], 'zset', KEYS[3], 'list', KEYS[7], 'hash')
if bad then return bad end
local events, events_bad = delayq_events_open(KEYS[5], KEYS[6])
if events_bad then return events_bad end
local raw = redis.call('hget', KEYS[1], ARGV[1])
if not raw then
  return {'gone'}
end
local record = cjson.decode(raw)
local token = ARGV[6]
if record.rev ~= ARGV[2] or record.next_ms ~= ARGV[3] or record.paused then
  for fired in string.gmatch(record.fires or '', '%S+') do
    if fired == token then
      return {'fired', raw}
    end
  end
  return {'stale', raw}
end
local now = delayq_server_ms()
local latest = tonumber(ARGV[3])
for i = FIRST, #ARGV, 2 do
  latest = math.max(latest, tonumber(ARGV[i]))
end
if latest > now then
  return {'early', string.format('%d', now)}
end
for i = FIRST + 1, #ARGV, 2 do
  if redis.call('zscore', KEYS[2], ARGV[i]) then
    return {'collision'}
  end
end
local dues, pushed = {}, {}
for i = FIRST, #ARGV, 2 do
  dues[#dues + 1], pushed[#pushed + 1] = ARGV[i], ARGV[i + 1]
  record.last_ms = ARGV[i]
end
delayq_offer(KEYS[2], KEYS[3], KEYS[4], dues, pushed)
record.next_ms = ARGV[4]
record.fired = (tonumber(record.fired) or 0) + #pushed
record.missed = (tonumber(record.missed) or 0) + tonumber(ARGV[5])
local fires = {}
for fired in string.gmatch(record.fires or '', '%S+') do
  fires[#fires + 1] = fired
end
fires[#fires + 1] = token
while #fires > FIRES_KEPT do
  table.remove(fires, 1)
end
record.fires = table.concat(fires, ' ')
local encoded = cjson.encode(record)
redis.call('hset', KEYS[1], ARGV[1], encoded)
local kind = ARGV[9]
if #pushed == 0 then
  kind = 'missed'
end
delayq_record_fire(KEYS[7], ARGV[1], {
  due = dues[1] or ARGV[3], at = string.format('%d', now), n = #pushed, missed = tonumber(ARGV[5]),
  kind = kind, by = ARGV[7], host = ARGV[8],
})
delayq_event(events, KEYS[6], 'schedule_fired', 'schedule', ARGV[1], 'count', #pushed)
delayq_count(KEYS[8], 'offered', #pushed)
return {'fired', encoded}
