-- LIBS: element offer request ids
-- cancel_request: the client gave up on a request whose reply it never saw
-- (the connection stayed down, or the caller stopped waiting). If the
-- request ran, what it removed goes back as its record says; either way it
-- is marked cancelled, so a first run that arrives late does nothing.
-- KEYS: the request's own KEYS, its request key last (the record names
--       keys by their index there)
-- Returns 0 when the request had not run, 1 when it had run and what it
-- removed is back, 2 when it had run and has nothing to undo. The mark keeps
-- the answer, so a resent cancel gives it again (a mark of an older client,
-- without one, answers 0).
local request = KEYS[#KEYS]
local stored = redis.call('get', request)
local outcome = 0
if stored then
  local record = cmsgpack.unpack(stored)
  if record[1] == 'cancelled' then
    return record[2] or 0
  end
  if record[1] ~= 'done' then
    return 0
  end
  local reply, undo = record[2], record[3]
  outcome = 2
  if undo and undo[1] == 'lpush' then
    local back = {}
    for i = #reply, 1, -1 do
      back[#back + 1] = reply[i]
    end
    delayq_call_chunked('lpush', KEYS[undo[2]], back)
    outcome = 1
  elseif undo and undo[1] == 'restore' then
    -- undo[7], the id index, and the elements' ids (undo[8], else the
    -- reply's fourth field) are absent from records of older clients.
    local elements, scores = undo[5] or reply[1], undo[6] or reply[2]
    local ids = undo[7] and KEYS[undo[7]]
    local taken = ids and (undo[8] or reply[4])
    delayq_restore_indexed(KEYS[undo[2]], KEYS[undo[3]], KEYS[undo[4]], ids, elements, scores, taken)
    outcome = 1
  end
end
redis.call('set', request, cmsgpack.pack({'cancelled', outcome}), 'PX', DELAYQ_REQUEST_TTL_MS)
return outcome
