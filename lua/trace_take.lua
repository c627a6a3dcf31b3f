-- LIBS: element traces
-- trace_take: the trace contexts of delivered values (feature
-- `opentelemetry`, src/queue/reliable/traces.rs; lib/traces.lua).
-- KEYS: 1 trace records (delayq_traces), 2 trace expiry (delayq_traces_expiry)
-- ARGV: the SHA1 (hex) of each delivered payload
-- Returns, for each, the context taken (the oldest due), or false.
-- Cost: O(1) per value (a record holds at most 16 entries).
local bad = delayq_check_types(KEYS[1], 'hash', KEYS[2], 'zset')
if bad then return bad end
return delayq_traces_take(KEYS[1], KEYS[2], ARGV)
