-- Loads elements [ARGV[1], ARGV[2]) of the backlog scenario into a delayed
-- queue, packed as delayq and Redisson 3.21.1+ pack them (Bc0Lc0), with
-- payloads of ARGV[6] bytes (16 when absent). A tenth of them (those whose number times 7919, a prime,
-- is below a tenth of ARGV[5] modulo ARGV[5]: spread through the whole
-- pending list) are due at ARGV[3], the others at ARGV[4].
-- KEYS: 1 timeout set, 2 pending list
local first, last = tonumber(ARGV[1]), tonumber(ARGV[2])
local soon, later = ARGV[3], ARGV[4]
local total = tonumber(ARGV[5])
local size = tonumber(ARGV[6] or '16')
local padding = string.rep('x', math.max(0, size - 16))
local members, elements = {}, {}
local function flush()
  if #elements > 0 then
    redis.call('zadd', KEYS[1], unpack(members))
    redis.call('rpush', KEYS[2], unpack(elements))
    members, elements = {}, {}
  end
end
for i = first, last - 1 do
  local h = (i * 2654435761) % 4294967296
  local id = struct.pack('<I4I4', h, i)
  local payload = string.format('ord-%012d', i) .. padding
  local element = struct.pack('Bc0Lc0', 8, id, #payload, payload)
  local due = later
  if (i * 7919) % total < total / 10 then due = soon end
  members[#members + 1] = due
  members[#members + 1] = element
  elements[#elements + 1] = element
  if #elements == 1000 or #elements * size >= 4000000 then flush() end
end
flush()
return redis.call('llen', KEYS[2])
