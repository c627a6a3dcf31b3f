-- LIBS: (none)
-- registry_forget: drop a queue's name from delayq's registry of queues
-- (Client::forget_queue_if_gone), unless it was registered again since the
-- caller read its score.
-- KEYS: 1 the registry (delayq_queues)
-- ARGV: 1 queue name, 2 the score read
-- Returns nothing: a resend does what the first run did.
local score = redis.call('zscore', KEYS[1], ARGV[1])
if score and tonumber(score) == tonumber(ARGV[2]) then
  redis.call('zrem', KEYS[1], ARGV[1])
end
return false
