-- ack_batch: settle many deliveries for good (ack.lua for each, in one call).
-- KEYS: 1 lease set (delayq_leases), 2 acked set, 3 events config, 4 events
--       stream (lib/events.lua: one 'acked' event per call that settles any,
--       with the count it settled: a resend writes none)
-- ARGV: 1 how long acked ids are remembered (ms), 2 most acked ids
--       remembered, 3.. the deliveries (8-byte id, 10-digit count, value)
-- Returns one integer per delivery, in order: 1 when it is (or already was)
-- acknowledged, 0 when it is too late (its visibility timeout gave it back).
--
-- Harmless to resend: a delivery acked by the first run is found in the
-- acked set and answers 1 again, one too late answers 0 again. The acked
-- set is kept small as in ack.lua: each call drops up to two ids per
-- delivery acked that are too old or over the cap, and it expires when acks
-- stop. Cost: O(k log m) for k deliveries and m in flight.
local bad = delayq_check_types(KEYS[1], 'zset', KEYS[2], 'zset')
if bad then return bad end
local events, events_bad = delayq_events_open(KEYS[3], KEYS[4])
if events_bad then return events_bad end
local window, cap = tonumber(ARGV[1]), tonumber(ARGV[2])
local reply, acked = {}, {}
for i = 3, #ARGV do
  local member = ARGV[i]
  local id = string.sub(member, 1, 8)
  if redis.call('zrem', KEYS[1], member) == 1 then
    acked[#acked + 1] = id
    reply[#reply + 1] = 1
  elseif redis.call('zscore', KEYS[2], id) then
    reply[#reply + 1] = 1
  else
    reply[#reply + 1] = 0
  end
end
local k = #acked
if k > 0 then
  local now = delayq_server_ms()
  local oldest = redis.call('zrange', KEYS[2], 0, 2 * k - 1, 'WITHSCORES')
  local old = {}
  for i = 1, #oldest, 2 do
    if tonumber(oldest[i + 1]) <= now - window then
      old[#old + 1] = oldest[i]
    end
  end
  if #old > 0 then
    redis.call('zrem', KEYS[2], unpack(old))
  end
  local over = redis.call('zcard', KEYS[2]) - cap + k
  if over > 0 then
    redis.call('zpopmin', KEYS[2], math.min(over, 2 * k))
  end
  local args = {}
  for i = 1, k do
    args[#args + 1] = now
    args[#args + 1] = acked[i]
  end
  redis.call('zadd', KEYS[2], unpack(args))
  redis.call('pexpire', KEYS[2], window)
  delayq_event(events, KEYS[4], 'acked', 'count', k, 'deliveries', delayq_event_ids(acked))
end
return reply
