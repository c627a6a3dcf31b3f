-- cancel_request: the client gave up on a request whose reply it never saw
-- (the connection stayed down). If the request ran, what it removed goes
-- back (its undo steps); either way it is marked cancelled, so a first run
-- that arrives late does nothing.
-- KEYS: the request's own KEYS, its request key last (undo steps name
--       keys by their index there)
-- Returns 1 when the request had run and was undone, 0 otherwise.
local request = KEYS[#KEYS]
local stored = redis.call('get', request)
local undone = 0
if stored then
  local record = cmsgpack.unpack(stored)
  if record[1] == 'cancelled' then
    return 0
  end
  for _, step in ipairs(record[3]) do
    delayq_call_chunked(step[1], KEYS[step[2]], step[3])
  end
  undone = 1
end
redis.call('set', request, cmsgpack.pack({'cancelled'}), 'PX', DELAYQ_REQUEST_TTL_MS)
return undone
