-- Ids (src/queue/delayed/ids.rs: DelayedQueue::offer_with_id and the rest).
-- An element offered with an id takes its 8 id bytes from the id instead of
-- at random: the first 8 bytes of SHA-1(id) in the modern layout; in the
-- legacy layout, the double of its first 52 bits. The element stays a normal
-- Redisson element; only its id bytes are chosen. The index
-- delayq_ids:{N} (HASH) maps those 8 bytes to an entry: the id's length (u16
-- big-endian), the id, then the element; so finding an id costs a hash
-- lookup and a score lookup, and a reader of the queue can name each
-- element's id.
--
-- An entry whose element left the timeout set (transferred, taken or removed,
-- by delayq or by Java) is stale. delayq's transfers drop the entries of what
-- they move; every id operation checks what it reads; every id offer checks
-- a few random entries and drops the stale ones, so what Java moves or
-- removes is cleaned up too, and the index never outgrows the elements with
-- ids by more than a bounded share.

-- Random index entries an id offer checks.
local DELAYQ_IDS_SAMPLE = 3

-- An index entry: the id and its element.
local function delayq_id_entry(id, element)
  return struct.pack('>I2', #id) .. id .. element
end

-- The element of an index entry, and the id.
local function delayq_id_element(entry)
  local n = struct.unpack('>I2', entry)
  return string.sub(entry, 3 + n), string.sub(entry, 3, 2 + n)
end

-- The 8 id bytes an element with this id has in `format`.
local function delayq_id_bytes(format, id)
  local hex = redis.sha1hex(id)
  if format == 'legacy' then
    return struct.pack('<d', tonumber(string.sub(hex, 1, 13), 16))
  end
  -- Two 32-bit halves: a batch offer computes this per member.
  return struct.pack('>I4I4', tonumber(string.sub(hex, 1, 8), 16), tonumber(string.sub(hex, 9, 16), 16))
end

-- The 8 id bytes of a packed element (its field in the index), or nil.
local function delayq_element_id(e)
  local _, format = delayq_payload(e)
  if format == 'modern' then
    return string.sub(e, 2, 9)
  elseif format == 'legacy' then
    return string.sub(e, 1, 8)
  end
  return nil
end

-- The pending element with this id and its score, in either layout, or nil
-- (a stale entry found on the way is dropped). Two ids whose id bytes are
-- equal (a SHA-1 prefix collision: 64 bits in the modern layout, 52 in the
-- legacy one) fail the script before it writes anything, rather than act on
-- each other's element.
local function delayq_id_find(ids, timeout, id)
  for _, format in ipairs({'modern', 'legacy'}) do
    local field = delayq_id_bytes(format, id)
    local entry = redis.call('hget', ids, field)
    if entry then
      local element, owner = delayq_id_element(entry)
      local score = redis.call('zscore', timeout, element)
      if score then
        if owner ~= id then
          error('DELAYQ_ID_COLLISION ids ' .. owner .. ' and ' .. id .. ' have the same id bytes; use another id')
        end
        return element, score, field
      end
      redis.call('hdel', ids, field)
    end
  end
  return nil
end

-- Drops the index entries of elements that left the timeout set.
local function delayq_ids_forget(ids, elements)
  if #elements == 0 or redis.call('exists', ids) == 0 then
    return
  end
  for i = 1, #elements do
    local field = delayq_element_id(elements[i])
    local entry = field and redis.call('hget', ids, field)
    if entry and delayq_id_element(entry) == elements[i] then
      redis.call('hdel', ids, field)
    end
  end
end

-- Takes the index entries of elements leaving the timeout set that may come
-- back (a poll, a purge: lib/request.lua's give-backs): returns their ids in
-- order (false: none), which travel with the elements so that a give-back
-- indexes them again (delayq_ids_put_back). Without this, an entry would
-- read as stale while its element is out, and the element would come back
-- without its id.
local function delayq_ids_take(ids, elements)
  local taken = {}
  for i = 1, #elements do taken[i] = false end
  if #elements == 0 or redis.call('exists', ids) == 0 then
    return taken
  end
  -- One HMGET and one HDEL for the lot: a transfer moves hundreds.
  local fields, at = {}, {}
  for i = 1, #elements do
    local field = delayq_element_id(elements[i])
    if field then
      fields[#fields + 1] = field
      at[#fields] = i
    end
  end
  local gone = {}
  for from = 1, #fields, 4000 do
    local to = math.min(from + 3999, #fields)
    local entries = redis.call('hmget', ids, unpack(fields, from, to))
    for j = 1, #entries do
      local entry = entries[j]
      if entry then
        local i = at[from + j - 1]
        local element, id = delayq_id_element(entry)
        if element == elements[i] then
          taken[i] = id
          gone[#gone + 1] = fields[from + j - 1]
        end
      end
    end
  end
  delayq_call_chunked('hdel', ids, gone)
  return taken
end

-- Indexes elements given back under the ids they left with (false or nil:
-- none). The id is still free unless it was offered again while the element
-- was out: then the newer element keeps it and the given-back one returns as
-- a plain element (it is still delivered).
local function delayq_ids_put_back(ids, timeout, elements, taken)
  for i = 1, #elements do
    local id = taken and taken[i]
    if id then
      local field = delayq_element_id(elements[i])
      local entry = field and redis.call('hget', ids, field)
      local holder = entry and delayq_id_element(entry)
      if field and not (holder and holder ~= elements[i] and redis.call('zscore', timeout, holder)) then
        redis.call('hset', ids, field, delayq_id_entry(id, elements[i]))
      end
    end
  end
end

-- Restores elements (lib/request.lua's delayq_restore) and indexes them
-- again under the ids they left with. An element with an id that is pending
-- already (offered again, same id and value, while it was out) is not given
-- back a second time: one element per id while pending.
local function delayq_restore_indexed(pending, timeout, channel, ids, elements, scores, taken)
  if ids and taken then
    local e, s, t = {}, {}, {}
    for i = 1, #elements do
      if not (taken[i] and redis.call('zscore', timeout, elements[i])) then
        e[#e + 1], s[#s + 1], t[#t + 1] = elements[i], scores[i], taken[i]
      end
    end
    elements, scores, taken = e, s, t
  end
  local n = delayq_restore(pending, timeout, channel, elements, scores)
  if ids and taken then
    delayq_ids_put_back(ids, timeout, elements, taken)
  end
  return n
end

-- Drops the stale ones among index entries read as {field, entry, ...}
-- (fields not 8 bytes long, as the sweep's 'cursor', are not entries).
local function delayq_ids_drop_stale(ids, timeout, entries)
  for i = 1, #entries, 2 do
    if #entries[i] == 8 and not redis.call('zscore', timeout, (delayq_id_element(entries[i + 1]))) then
      redis.call('hdel', ids, entries[i])
    end
  end
end

-- Checks a few random index entries and drops the stale ones.
local function delayq_ids_sample(ids, timeout)
  delayq_ids_drop_stale(ids, timeout, redis.call('hrandfield', ids, DELAYQ_IDS_SAMPLE, 'WITHVALUES'))
end

-- Index entries a transfer run checks, from where the last run stopped (the
-- cursor is the index's field 'cursor', not 8 bytes long like an id's): so
-- entries of elements Java moved or removed go even when no id is offered.
local DELAYQ_IDS_SWEEP = 500

local function delayq_ids_sweep(ids, timeout)
  if redis.call('exists', ids) == 0 then
    return
  end
  local cursor = redis.call('hget', ids, 'cursor') or '0'
  local scan = redis.call('hscan', ids, cursor, 'COUNT', DELAYQ_IDS_SWEEP)
  delayq_ids_drop_stale(ids, timeout, scan[2])
  if redis.call('hlen', ids) - redis.call('hexists', ids, 'cursor') == 0 then
    redis.call('del', ids) -- no entry left, at most the cursor
  else
    redis.call('hset', ids, 'cursor', scan[1])
  end
end

-- Removes one element from the pending list: from the tail when it is among
-- the last 1,000, else from the head (one scan at most, as Java's remove).
local function delayq_pending_remove(pending, element)
  if redis.call('lpos', pending, element, 'RANK', -1, 'MAXLEN', 1000) then
    return redis.call('lrem', pending, -1, element)
  end
  return redis.call('lrem', pending, 1, element)
end
