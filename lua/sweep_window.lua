-- sweep_window: move the due elements found in one window of the pending list.
-- KEYS: 1 destination list, 2 timeout set, 3 pending list, 4 quarantine list,
--       5 sweep set (the due elements, from sweep_collect.lua), 6 due-time
--       set and 7 its marker (lateness tracking, see the library)
-- ARGV: 1 cursor (index where the window starts), 2 window length,
--       3 most elements to move in this run, 4 time budget (ms) for reading
--       and marking; removing and moving what was marked takes about as long
-- Returns {next cursor, moved, quarantined, scanned}; scanned 0 at the end.
--
-- A backlog of due elements scattered through a long pending list (offer
-- order unlike due order) would cost Redisson one scan of the list per
-- element. A sweep reads the list once, window by window, each run one
-- atomic script: the elements of the window that are due are marked by index
-- (LSET), removed in one pass (LREM of the mark from the nearer end), and
-- moved in the order they were offered (they are all overdue). After every
-- run the pending list and the timeout set hold the same elements, in offer
-- order.
local bad = delayq_check_types(KEYS[1], 'list', KEYS[2], 'zset', KEYS[3], 'list', KEYS[4], 'list', KEYS[5], 'set', KEYS[6], 'zset')
if bad then return bad end
local started = redis.call('time')
local cursor, width, most = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local window = redis.call('lrange', KEYS[3], cursor, cursor + width - 1)
if #window == 0 then
  return {cursor, 0, 0, 0}
end
local hits = {}
local scanned = #window
for i = 1, #window, 2000 do
  local due = redis.call('smismember', KEYS[5], unpack(window, i, math.min(i + 1999, #window)))
  for j = 1, #due do
    if due[j] == 1 then
      hits[#hits + 1] = {i + j - 1, window[i + j - 1]}
      if #hits == most then
        scanned = i + j - 1
        break
      end
    end
  end
  if #hits == most then
    break
  end
end
if #hits == 0 then
  return {cursor + scanned, 0, 0, scanned}
end
local len = redis.call('llen', KEYS[3])
-- Marking costs a seek per element, longer the deeper the window: stop when
-- the budget (counted from the start of the run) is spent and leave the rest
-- of the window to the next run.
local budget_us = tonumber(ARGV[4]) * 1000
local marked = #hits
for k = 1, #hits do
  redis.call('lset', KEYS[3], cursor + hits[k][1] - 1, DELAYQ_TOMBSTONE)
  if k % 64 == 0 and k < #hits then
    local t = redis.call('time')
    if (t[1] - started[1]) * 1000000 + (t[2] - started[2]) > budget_us then
      marked = k
      scanned = hits[k + 1][1] - 1
      break
    end
  end
end
for k = #hits, marked + 1, -1 do
  hits[k] = nil
end
if cursor + scanned <= len - cursor then
  redis.call('lrem', KEYS[3], #hits, DELAYQ_TOMBSTONE)
else
  redis.call('lrem', KEYS[3], -#hits, DELAYQ_TOMBSTONE)
end
local elements = {}
for k = 1, #hits do
  elements[k] = hits[k][2]
end
delayq_call_chunked('srem', KEYS[5], elements)
local pushed, quarantined = delayq_deliver(KEYS[1], KEYS[2], KEYS[4], KEYS[6], KEYS[7], elements)
return {cursor + scanned - #hits, pushed, quarantined, scanned}
