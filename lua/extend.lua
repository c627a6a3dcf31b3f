-- LIBS: element
-- extend: push a delivery's visibility deadline to now + timeout.
-- KEYS: 1 lease set (delayq_leases)
-- ARGV: 1 delivery (8-byte id, 10-digit count, value), 2 timeout ms
-- Returns 1, or 0 when the delivery is no longer in flight. Cost: O(log n).
if redis.call('zadd', KEYS[1], 'XX', 'CH', delayq_server_ms() + tonumber(ARGV[2]), ARGV[1]) == 1 then
  return 1
end
return redis.call('zscore', KEYS[1], ARGV[1]) and 1 or 0
