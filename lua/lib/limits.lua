-- Admission limits (DelayedQueue::set_limits, src/queue/delayed/limits.rs):
-- the queue's limits HASH (delayq_limits:{q}) may hold 'max_size' (most
-- values pending plus ready in the destination list), 'max_payload' (most
-- bytes of one payload), 'offers' = 'off', 'takes' = 'off' and
-- 'concurrency' (most delayq deliveries in flight, read by the claims).
-- Absent, the queue has no limits; Java's offers and takes never read it.
-- Offer scripts read it once (one HMGET) with their other checks, before
-- they change anything, and refuse with an error reply that src/error.rs
-- turns into Error::OfferRefused:
--   DELAYQ_REFUSED offers_off
--   DELAYQ_REFUSED max_payload <limit> <payload bytes>
--   DELAYQ_REFUSED max_size <limit> <values in the queue> <values offered>
-- A refusal writes nothing but its 'refused' event (lib/events.lua).

-- The offer limits of the queue: false when none is set, else a table
-- {max_size, max_payload, offers_off}; or nil and an error reply when the
-- key is not a hash (checked before anything changes).
local function delayq_limits_open(key)
  if not key then
    return false
  end
  local found = redis.pcall('hmget', key, 'max_size', 'max_payload', 'offers')
  if found.err then
    return nil, redis.error_reply('WRONGTYPE ' .. key .. ' is not a hash (the queue limits)')
  end
  if not found[1] and not found[2] and not found[3] then
    return false
  end
  return {max_size = tonumber(found[1]), max_payload = tonumber(found[2]), offers_off = found[3] == 'off'}
end

-- What limits the queue's takes: whether they are switched off ('takes' =
-- 'off': consumers then take nothing, as while the queue is paused) and
-- the fleet-wide concurrency limit ('concurrency' = N: at most N delayq
-- deliveries in flight, the live members of the lease set, across every
-- process), or nil and an error reply when the key is not a hash. A run
-- given no limits key (a script run by hand with its older keys) has takes
-- on and no limit. Java's takes read neither.
local function delayq_take_limits(key)
  if not key then
    return false, nil, nil
  end
  local found = redis.pcall('hmget', key, 'takes', 'concurrency')
  if found.err then
    return nil, redis.error_reply('WRONGTYPE ' .. key .. ' is not a hash (the queue limits)')
  end
  return found[1] == 'off', nil, tonumber(found[2])
end

-- How many more deliveries the concurrency limit admits at `now` (0 or
-- less: none), or nil when there is no limit. Counts the live leases, those
-- whose visibility deadline (their score) is still ahead: a crashed
-- process's values stop counting when their visibility timeout ends, not
-- when a reaper gets to them. O(log n) in the deliveries in flight.
local function delayq_take_room(concurrency, leases, now)
  if not concurrency then
    return nil
  end
  return concurrency - redis.call('zcount', leases, '(' .. now, '+inf')
end

-- The payload length of a packed element (lib/element.lua's layouts),
-- without copying it.
local function delayq_payload_len(e)
  local n = #e
  if n >= 17 and string.byte(e, 1) == 8 and struct.unpack('<I8', e, 10) == n - 17 then
    return n - 17
  end
  return n - 16
end

-- Values pending plus values ready in the destination list, and in any
-- sets given (the priority sets, from a priority offer): what 'max_size'
-- bounds (values taken and not acked yet do not count).
local function delayq_queue_size(timeout, destination, sets)
  local size = redis.call('zcard', timeout) + redis.call('llen', destination)
  for _, set in ipairs(sets or {}) do
    size = size + redis.call('zcard', set)
  end
  return size
end

-- A refusal's reason as the 'refused' event names it: the error's text
-- without its code ('max_size 10 10 1' of 'DELAYQ_REFUSED max_size 10 10 1').
local function delayq_refusal_reason(refusal)
  return string.sub(refusal, #'DELAYQ_REFUSED ' + 1)
end

-- How many of `elements` (packed) may be added, from the first, and the
-- refusal of the next one: nil when all may. Offers off refuses them all;
-- an element over 'max_payload' stops the count before it; 'max_size'
-- stops it where the queue would be full.
local function delayq_admit(limits, timeout, destination, elements, sets)
  if not limits then
    return #elements
  end
  if limits.offers_off then
    return 0, 'DELAYQ_REFUSED offers_off'
  end
  local n = #elements
  local refusal
  if limits.max_payload then
    for i = 1, n do
      local len = delayq_payload_len(elements[i])
      if len > limits.max_payload then
        n = i - 1
        refusal = string.format('DELAYQ_REFUSED max_payload %d %d', limits.max_payload, len)
        break
      end
    end
  end
  if limits.max_size then
    local size = delayq_queue_size(timeout, destination, sets)
    local room = math.max(limits.max_size - size, 0)
    if room < n then
      return room, string.format('DELAYQ_REFUSED max_size %d %d %d', limits.max_size, size, #elements)
    end
  end
  return n, refusal
end
