-- LIBS: element traces
-- trace_put: stores a delivery's trace context again as its value goes
-- back for another delivery (a Worker's retry, a nack, a give-back), so
-- that the next handler continues the same trace (feature `opentelemetry`,
-- src/queue/reliable/traces.rs; lib/traces.lua).
-- KEYS: 1 trace records (delayq_traces), 2 trace expiry (delayq_traces_expiry)
-- ARGV: 1 context, 2 delay ms from the server's clock, 3 payload
-- Sent once: a resend could store the context twice (a lost reply only
-- costs the next delivery its parent).
local bad = delayq_check_types(KEYS[1], 'hash', KEYS[2], 'zset')
if bad then return bad end
delayq_traces_put(KEYS[1], KEYS[2], ARGV[1], {ARGV[3]}, {delayq_server_ms() + tonumber(ARGV[2])})
return 1
