-- A schedule's recent fires (delayq_schedule_fires:{N}, a hash in the
-- queue's slot: schedule name -> JSON array of its last DELAYQ_FIRES_KEPT
-- fires, newest first), written in the run that fires: lua/schedule_fire.lua
-- (a runner, at an occurrence) and lua/schedule_run.lua (run by hand). A
-- script checks the key's type with its others, before its first write;
-- this only adds. Each entry: due (ms, the first occurrence it offered or
-- skipped; the run itself for a run by hand), at (ms, the Redis server's
-- clock), n (values offered), missed (occurrences skipped by the misfire
-- policy), kind ('on_time' | 'late' | 'missed' | 'by_hand'), by (the
-- runner's id, as its heartbeats name it) and host. Cost: at most
-- DELAYQ_FIRES_KEPT small entries decoded and encoded.
local DELAYQ_FIRES_KEPT = 20

local function delayq_record_fire(key, name, entry)
  local fires = {entry}
  local raw = redis.call('hget', key, name)
  if raw then
    -- A record that does not parse is history lost, never a failed fire.
    local ok, old = pcall(cjson.decode, raw)
    if ok and type(old) == 'table' then
      for i = 1, math.min(#old, DELAYQ_FIRES_KEPT - 1) do
        fires[#fires + 1] = old[i]
      end
    end
  end
  redis.call('hset', key, name, cjson.encode(fires))
end
