-- LIBS: element offer request counts jobs events priority groups
-- reap: return to the queue what reliable consumers took but did not settle,
-- a bounded amount per call.
-- KEYS: 1 staging list, 2 lease set (delayq_leases), 3 destination list, 4 count records
--       (hash), 5 count record expiry (zset), 6 staging mark (hash), 7 the
--       run's lane record (lib/request.lua), 8 events config, 9 events stream
--       (lib/events.lua: one 'timed_out' event per call that gives back any),
--       10 stats hash (the 'timed_out' total), 11 job records, 12 job
--       record expiry (lib/jobs.lua: a timed-out delivery's job, if any,
--       ends its attempt as 'timed_out' and is ready again), 13 priority
--       ready set, 14 priority marker (lib/priority.lua: a delivery of a
--       priority level goes back to the head of that level), 15 TTL store
--       (delayq_ttl, lib/priority.lua: a delivery of a value with a TTL
--       goes back to the head of its level (the default too), with the same
--       expiry; its entry goes. Optional: a run by hand with older keys),
--       16 group values, 17 group delayed, 18 group ring, 19 group blocked,
--       20 group state (lib/groups.lua: a grouped delivery goes back to the
--       head of its key's line, its slot freed; optional)
-- ARGV: 1 grace ms for values moved but never claimed, 2 how long a count
--       record outlives the value's return (ms), 3 most values returned per
--       call, 4 most payload bytes returned per call (at least one value),
--       5 the run's id in its lane
-- Returns {deliveries timed out, unclaimed copies returned, 1 if there may
-- be more to do now (call again) else 0}. A resend of a call that returned
-- anything answers what that call did (its lane record).
--
-- A delivery whose deadline passed goes back to the head of the destination
-- (it was first in line) and its count is remembered (see claim.lua).
-- A copy in the staging list that no claim took (its consumer died between
-- its move, LMOVE or BLMOVE, and its claim, or lost the move's reply) goes
-- back once it has been there for the grace period: the mark says that the
-- first k copies of the list were there at time t (claims of copies before
-- the mark lower k), so no call reads the whole list. Returning a copy whose
-- consumer was about to claim it costs nothing: that claim finds no copy
-- and takes again. Expired count records (values given back that a Java
-- consumer or a plain take consumed) are dropped here.
-- Cost: O(log n) per value returned or record dropped, within the limits.
local bad = delayq_check_types(KEYS[1], 'list', KEYS[2], 'zset', KEYS[3], 'list', KEYS[4], 'hash', KEYS[5], 'zset', KEYS[6], 'hash')
if bad then return bad end
bad = delayq_jobs_check(KEYS[11], KEYS[12])
if bad then return bad end
bad = KEYS[13] and delayq_check_types(KEYS[13], 'zset')
if bad then return bad end
bad = KEYS[15] and delayq_check_types(KEYS[15], 'hash')
if bad then return bad end
-- No TTL store, no header to look up: one EXISTS a call.
local store = KEYS[15] and redis.call('exists', KEYS[15]) == 1 and KEYS[15] or nil
local replayed = delayq_run_replayed(KEYS[7], ARGV[5])
if replayed then return replayed end
local events, events_bad = delayq_events_open(KEYS[8], KEYS[9])
if events_bad then return events_bad end
local now = delayq_server_ms()
local grace, window = tonumber(ARGV[1]), tonumber(ARGV[2])
local budget, bytes = tonumber(ARGV[3]), tonumber(ARGV[4])
local more = 0
local jobbed = delayq_jobs_on(KEYS[11])
local grouped = delayq_groups_open(16)

-- Fetched one at a time (O(log n) each), so that no payload past the byte
-- limit is copied into the script.
local timed_out = 0
while budget > 0 do
  local expired = redis.call('zrangebyscore', KEYS[2], '-inf', now, 'LIMIT', 0, 1)
  local stop = #expired < 1
  for i = 1, #expired do
    local member = expired[i]
    if timed_out > 0 and #member > bytes then
      more = 1
      stop = true
      break
    end
    bytes = bytes - #member
    budget = budget - 1
    timed_out = timed_out + 1
    local level, count = delayq_priority_lease(member)
    local value = string.sub(member, 19)
    redis.call('zrem', KEYS[2], member)
    delayq_counts_add(KEYS[4], KEYS[5], redis.sha1hex(value), count, now, now + window)
    local header = delayq_ttl_take(store, string.sub(member, 1, 8))
    local group, seq = delayq_group_release(grouped, string.sub(member, 1, 8))
    if group then
      delayq_group_add(grouped, group, value, seq)
      delayq_group_runnable(grouped, group)
    else
      delayq_priority_give_back(KEYS[13], KEYS[14], KEYS[3], level, {value}, {header or false})
    end
    if jobbed then
      delayq_jobs_end_ready(KEYS[11], KEYS[12], string.sub(member, 1, 8), 'timed_out', value, now, true)
    end
  end
  if stop then
    break
  end
end
if budget == 0 then
  more = 1
end
if timed_out > 0 then
  delayq_counts_expire(KEYS[4], KEYS[5], now + window)
end

local returned = 0
local mark = redis.call('hmget', KEYS[6], 't', 'k')
local since, marked = tonumber(mark[1]), tonumber(mark[2] or '0')
if marked <= 0 then
  since = nil
end
if since and now - since >= grace then
  while marked > 0 and budget > 0 do
    local value = redis.call('lindex', KEYS[1], 0)
    if not value then
      marked = 0
      break
    end
    if returned + timed_out > 0 and #value > bytes then
      break
    end
    redis.call('lpop', KEYS[1])
    redis.call('lpush', KEYS[3], value)
    bytes = bytes - #value
    budget = budget - 1
    marked = marked - 1
    returned = returned + 1
  end
  if marked > 0 then
    more = 1
    redis.call('hset', KEYS[6], 'k', marked)
  else
    since = nil
  end
end
if not since then
  local waiting = redis.call('llen', KEYS[1])
  if waiting > 0 then
    redis.call('hset', KEYS[6], 't', now, 'k', waiting)
  else
    redis.call('del', KEYS[6])
  end
end

local stale = redis.call('zrangebyscore', KEYS[5], '-inf', now, 'LIMIT', 0, 100)
if #stale > 0 then
  redis.call('hdel', KEYS[4], unpack(stale))
  redis.call('zrem', KEYS[5], unpack(stale))
  if #stale == 100 then
    more = 1
  end
end
if timed_out > 0 then
  delayq_event(events, KEYS[9], 'timed_out', 'count', timed_out)
  delayq_count(KEYS[10], 'timed_out', timed_out)
end
return delayq_run_answer(KEYS[7], ARGV[5], {timed_out, returned, more}, timed_out + returned > 0)
