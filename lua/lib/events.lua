-- Lifecycle events (Client::enable_events, src/queue/events/): while the
-- queue's events config key (delayq_events_config:{q}, a STRING holding the
-- stream's max length) exists, each script that changes the queue adds one
-- entry to its stream (delayq_events:{q}) with XADD ... MAXLEN ~ max, in the
-- same run: atomic, no extra round trip. Fields: 'kind' first, then the
-- kind's own (src/queue/events/event.rs decodes them). Scripts take the two
-- keys as their last KEYS (before a request key) and:
--   local events, bad = delayq_events_open(config, stream)
--   if bad then return bad end   -- before changing anything
--   ...
--   delayq_event(events, stream, 'kind', field, value, ...)
-- Off, this costs one GET. A script emits only when its change happened, so
-- a resend that changes nothing (request key, lane record, compare-and-set)
-- writes no second event.

-- The stream's max length when events are on, false when off; or false and
-- an error reply when the config does not parse or either key has the wrong
-- type (checked here, before the script changes anything: nothing is lost).
-- A run given no events keys (a script run by hand with its older keys)
-- writes none.
local function delayq_events_open(config, stream)
  if not config or not stream then
    return false
  end
  local max = redis.pcall('get', config)
  if type(max) == 'table' and max.err then
    return false, redis.error_reply('WRONGTYPE ' .. config .. ' is not a string (the events config)')
  end
  if not max then
    return false
  end
  local n = tonumber(max)
  if not n or n < 1 or n ~= math.floor(n) then
    return false, redis.error_reply('DELAYQ_EVENTS_CONFIG ' .. config .. ' holds ' .. string.format('%q', string.sub(max, 1, 64)) .. ', not a max length')
  end
  local found = redis.call('type', stream).ok
  if found ~= 'none' and found ~= 'stream' then
    return false, redis.error_reply('WRONGTYPE ' .. stream .. ' holds a ' .. found .. ', not a stream (the events)')
  end
  return n
end

-- Adds one event (kind and field/value pairs) when events are on.
local function delayq_event(max, stream, kind, ...)
  if max then
    redis.call('xadd', stream, 'MAXLEN', '~', max, '*', 'kind', kind, ...)
  end
end

-- A delivery id (8 bytes) as 16 hex digits, as DeliveryId displays it.
local function delayq_hex(bytes)
  return string.format('%02x%02x%02x%02x%02x%02x%02x%02x', string.byte(bytes, 1, 8))
end

-- Up to DELAYQ_EVENT_IDS delivery ids in hex, joined by spaces (a batch
-- event carries its count and the first ids only, so it stays small).
local DELAYQ_EVENT_IDS = 32
local function delayq_event_ids(ids)
  local out = {}
  for i = 1, math.min(#ids, DELAYQ_EVENT_IDS) do
    out[i] = delayq_hex(ids[i])
  end
  return table.concat(out, ' ')
end

-- Totals (delayq_stats:{q}, HASH, nine fields, src/queue/status.rs): added
-- beside an event, under its condition (a resend adds nothing), events on
-- or off. Never refuses: a stats key of another type is left alone.
local DELAYQ_STATS_MS = 35 * 24 * 3600 * 1000
local function delayq_count(stats, field, n)
  if stats and n > 0 then
    local added = redis.pcall('hincrby', stats, field, n)
    if type(added) == 'number' then
      redis.pcall('pexpire', stats, DELAYQ_STATS_MS)
    end
  end
end
