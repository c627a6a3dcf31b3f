-- LIBS: element offer request
-- expire: set or clear the time to live of a delayed queue's pending list and
-- timeout set together (RDelayedQueue.expire / clearExpire).
-- KEYS: 1 pending list, 2 timeout set, 3 request key (a resend answers as
--       the first run did: run again, a PERSIST finds no time to live left,
--       and an expiry in the past finds the keys gone)
-- ARGV: 1 'at' (2 = unix time in ms) or 'persist'
-- Returns 1 when at least one key was changed.
local replayed = delayq_replayed(KEYS[3])
if replayed then return replayed end
local changed = 0
for i = 1, 2 do
  local r
  if ARGV[1] == 'persist' then
    r = redis.call('persist', KEYS[i])
  else
    r = redis.call('pexpireat', KEYS[i], ARGV[2])
  end
  if r == 1 then
    changed = 1
  end
end
return delayq_answer(KEYS[3], changed)
