-- history_put: keep one finished minute of a series (a queue, or the whole
-- server) and roll its hour up from the minutes kept (src/history.rs).
-- KEYS: 1 the series' minutes (HASH: hour number -> JSON array of that
--       hour's minute records), 2 its hours (HASH: day number -> JSON array
--       of that day's hour records); both in one cluster slot
-- ARGV: 1 the minute record (a JSON array, its first item the minute since
--       the epoch; see RECORD in src/history.rs), 2 hours of minutes kept,
--       3 days of hours kept, 4 the minutes' expiry (ms), 5 the hours' (ms)
-- Returns the number of minutes now kept in the minute's hour.
--
-- A minute written again (a second dashboard, a resent call) replaces the
-- first: nothing is counted twice, and the hour is computed again from its
-- minutes, so a resend answers as the first run. Bounded: each field holds
-- one hour (60 records) or one day (24); fields older than ARGV[2] hours or
-- ARGV[3] days are deleted by every call (HKEYS of at most a day's and a
-- month's fields), and both keys expire when no dashboard writes.
local record = cjson.decode(ARGV[1])
local minute = record[1]
local hour = math.floor(minute / 60)
local day = math.floor(hour / 24)

-- Replaces the record of the same period in a field's array, keeps order.
local function put(key, field, item)
  local raw = redis.call('hget', key, field)
  local items = raw and cjson.decode(raw) or {}
  local kept = {}
  for i = 1, #items do
    if items[i][1] ~= item[1] then kept[#kept + 1] = items[i] end
  end
  kept[#kept + 1] = item
  table.sort(kept, function(a, b) return a[1] < b[1] end)
  redis.call('hset', key, field, cjson.encode(kept))
  return kept
end

-- Deletes the fields older than `oldest`.
local function trim(key, oldest)
  local fields = redis.call('hkeys', key)
  for i = 1, #fields do
    if tonumber(fields[i]) < oldest then redis.call('hdel', key, fields[i]) end
  end
end

local minutes = put(KEYS[1], hour, record)
trim(KEYS[1], hour - tonumber(ARGV[2]))
redis.call('pexpire', KEYS[1], ARGV[4])

-- The hour: totals and levels as of its last minute, flows summed, the
-- median lag averaged, the peaks (lag p99, oldest ready age, memory) at
-- their highest. Items: 1 period, 2-7 totals, 8 delivered, 9 lag p50,
-- 10 lag p99, 11 oldest ready age, 12 memory, 13-15 ready, pending, dead,
-- 16 the cancelled total (absent from an older dashboard's records).
local last = minutes[#minutes]
local rolled = {hour}
for i = 2, 16 do rolled[i] = last[i] end
local delivered, p50_sum, p50_n = 0, 0, 0
for i = 9, 12 do rolled[i] = cjson.null end
for _, m in ipairs(minutes) do
  if type(m[8]) == 'number' then delivered = delivered + m[8] end
  if type(m[9]) == 'number' then p50_sum, p50_n = p50_sum + m[9], p50_n + 1 end
  for i = 10, 12 do
    if type(m[i]) == 'number' and (rolled[i] == cjson.null or m[i] > rolled[i]) then rolled[i] = m[i] end
  end
end
rolled[8] = delivered
if p50_n > 0 then rolled[9] = math.floor(p50_sum / p50_n) end
put(KEYS[2], day, rolled)
trim(KEYS[2], day - tonumber(ARGV[3]))
redis.call('pexpire', KEYS[2], ARGV[5])
return #minutes
