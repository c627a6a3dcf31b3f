
-- Delivery counts of given-back copies (reliable queues; see claim.lua). A
-- value given back to the plain destination list cannot carry its count,
-- so the count waits for the next claim of an equal value, in a record per
-- value (by SHA1): entries "count:copies:ready_ms", one per count, so a
-- record stays small however many equal copies are given back. A count is
-- ready once ready_ms has passed: a copy nacked with a delay is not back
-- before then, and an equal copy claimed meanwhile starts at 1.
local function delayq_counts_parse(record)
  local entries = {}
  for c, n, r in string.gmatch(record or '', '(%d+):(%d+):(%d+)') do
    entries[#entries + 1] = {tonumber(c), tonumber(n), tonumber(r)}
  end
  return entries
end

-- Writes a record back; returns false when nothing is left in it.
local function delayq_counts_write(key, sha, entries)
  local parts = {}
  for i = 1, #entries do
    if entries[i][2] > 0 then
      parts[#parts + 1] = string.format('%d:%d:%d', entries[i][1], entries[i][2], entries[i][3])
    end
  end
  if #parts == 0 then
    redis.call('hdel', key, sha)
    return false
  end
  redis.call('hset', key, sha, table.concat(parts, ' '))
  return true
end

-- Remembers one copy given back with `count`, ready from `ready` (ms); the
-- record is dropped at `expires` (ms) by the reaper (call
-- delayq_counts_expire once per script too).
local function delayq_counts_add(key, expiry_key, sha, count, ready, expires)
  local entries = delayq_counts_parse(redis.call('hget', key, sha))
  local found = false
  for i = 1, #entries do
    if entries[i][1] == count then
      entries[i][2] = entries[i][2] + 1
      entries[i][3] = math.max(entries[i][3], ready)
      found = true
    end
  end
  if not found then
    entries[#entries + 1] = {count, 1, ready}
  end
  delayq_counts_write(key, sha, entries)
  redis.call('zadd', expiry_key, 'GT', expires, sha)
end

-- Both keys expire with their last record, even if no reaper runs.
local function delayq_counts_expire(key, expiry_key, expires)
  for _, k in ipairs({key, expiry_key}) do
    redis.call('pexpireat', k, expires, 'NX')
    redis.call('pexpireat', k, expires, 'GT')
  end
end

-- Takes the highest ready count of a value for a claim; 0 when none.
local function delayq_counts_take(key, expiry_key, sha, now)
  local record = redis.call('hget', key, sha)
  if not record then
    return 0
  end
  local entries = delayq_counts_parse(record)
  local best
  for i = 1, #entries do
    if entries[i][3] <= now and (not best or entries[i][1] > entries[best][1]) then
      best = i
    end
  end
  if not best then
    return 0
  end
  local count = entries[best][1]
  entries[best][2] = entries[best][2] - 1
  if not delayq_counts_write(key, sha, entries) then
    redis.call('zrem', expiry_key, sha)
  end
  return count
end
