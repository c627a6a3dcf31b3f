-- extend: push a delivery's visibility deadline to now + timeout.
-- KEYS: 1 inflight set
-- ARGV: 1 delivery (8-byte id + value), 2 timeout ms
-- Returns 1, or 0 when the delivery is no longer in flight.
if not redis.call('zscore', KEYS[1], ARGV[1]) then
  return 0
end
redis.call('zadd', KEYS[1], delayq_server_ms() + tonumber(ARGV[2]), ARGV[1])
return 1
