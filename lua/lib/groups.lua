-- Groups (OfferOptions::group, src/queue/groups.rs): values offered with a
-- group key run at most `concurrency` at a time per key (1 by default: one
-- at a time), in the order they became ready, across every consumer of
-- the queue; different keys run side by side, taken round robin. They live
-- in delayq's keys of the queue's slot, never in Redisson's, so a Java
-- consumer never sees them (and a Java retry never reorders them):
--   values (ZSET, score 0, read by lex): <key length, 5 digits><key><seq,
--     16 digits><payload>: each key's line, in order. A value's seq is
--     taken at its offer (counting up from DELAYQ_GROUP_MID), kept while
--     it is delivered (in its d:<delivery> field), and given back with it,
--     so a value given back returns to its own place in its line, whatever
--     order the give-backs come in.
--   delayed (ZSET): members as in values -> due ms; a claim moves due ones
--     into their key's line, where their seq puts them (offer order).
--   ring (ZSET): keys that may run -> their turn (the state's counter). A
--     claim takes the lowest turn first, one value a turn, and puts the key
--     back at the end while it has values and room: a key with a long line
--     waits its turn like any other, so it cannot starve the rest.
--   blocked (ZSET): keys held -> ms they may run again: a failed value's
--     retry under 'hold' (its value waits in its place meanwhile), or the
--     key's rate limit.
--   state (HASH): 'n:<key>' the key's values in flight; 'd:<delivery>' the
--     seq then the key of a grouped delivery in flight (8-byte id); 'tail',
--     'turn', 'alt' the counters; 'cfg' the settings ('<concurrency> <rate count>
--     <rate period ms> <hold|skip>', GroupLimits); 'r:<key>' the key's rate
--     limit time (GCRA, ms). It exists once the queue had a grouped value:
--     consumers look at groups only then.

local DELAYQ_GROUP_MID = 5e15
-- Due delayed values and due blocked keys moved per claim, at most; also
-- the ring's turns a claim may spend on keys with nothing to run.
local DELAYQ_GROUP_MOVE = 100

local function delayq_group_prefix(key)
  return string.format('%05d', #key) .. key
end

local function delayq_group_seq(n)
  return string.format('%016.0f', n)
end

-- A line's member: its key, its seq, its payload (nil: not one).
local function delayq_group_parse(member)
  local len = tonumber(string.match(member, '^(%d%d%d%d%d)'))
  if not len or #member < 21 + len then return nil end
  return string.sub(member, 6, 5 + len), string.sub(member, 6 + len, 21 + len), string.sub(member, 22 + len)
end


-- The group keys a script was given from KEYS[at] (values, delayed, ring,
-- blocked, state): nil when not given (a run by hand with older keys) or
-- when the queue never had a grouped value (one EXISTS).
local function delayq_groups_open(at)
  local state = KEYS[at + 4]
  if not state or redis.call('exists', state) == 0 then return nil end
  return {values = KEYS[at], delayed = KEYS[at + 1], ring = KEYS[at + 2], blocked = KEYS[at + 3], state = state}
end

-- The queue's group settings (read once a call).
local function delayq_group_cfg(g)
  if g.cfg == nil then
    local raw = redis.call('hget', g.state, 'cfg') or ''
    local c, n, ms, f = string.match(raw, '^(%d+) (%d+) (%d+) (%a+)$')
    g.cfg = {concurrency = math.max(tonumber(c) or 1, 1), rate_n = tonumber(n) or 0, rate_ms = tonumber(ms) or 0,
      hold = f ~= 'skip'}
  end
  return g.cfg
end

-- The head of a key's line (a member), or nil.
local function delayq_group_head(g, key)
  local prefix = delayq_group_prefix(key)
  return redis.call('zrange', g.values, '[' .. prefix, '(' .. prefix .. '\255', 'BYLEX', 'LIMIT', 0, 1)[1]
end

-- Puts a key in the ring (at its end) when it may run: not blocked, below
-- its concurrency, with a value waiting. A key in the ring already keeps
-- its turn.
local function delayq_group_runnable(g, key)
  if redis.call('zscore', g.blocked, key) then return end
  local n = tonumber(redis.call('hget', g.state, 'n:' .. key) or '0')
  if n >= delayq_group_cfg(g).concurrency or not delayq_group_head(g, key) then return end
  if redis.call('zscore', g.ring, key) then return end
  redis.call('zadd', g.ring, redis.call('hincrby', g.state, 'turn', 1), key)
end

-- A new seq: the end of every line.
local function delayq_group_next_seq(g)
  return delayq_group_seq(DELAYQ_GROUP_MID + redis.call('hincrby', g.state, 'tail', 1))
end

-- Adds a payload to a key's line: at `seq` (a give-back's own place), or
-- at its end.
local function delayq_group_add(g, key, payload, seq)
  redis.call('zadd', g.values, 0, delayq_group_prefix(key) .. (seq or delayq_group_next_seq(g)) .. payload)
end

-- Due delayed values to their keys' tails, due blocked keys back to the
-- ring: at most DELAYQ_GROUP_MOVE of each.
local function delayq_group_due(g, now)
  local touched, seen = {}, {}
  local due = redis.call('zrangebyscore', g.delayed, '-inf', now, 'LIMIT', 0, DELAYQ_GROUP_MOVE)
  for _, member in ipairs(due) do
    redis.call('zrem', g.delayed, member)
    local key = delayq_group_parse(member)
    if key then
      -- Its seq (from its offer) puts it in its place in the line.
      redis.call('zadd', g.values, 0, member)
      if not seen[key] then seen[key] = true; touched[#touched + 1] = key end
    end
  end
  local free = redis.call('zrangebyscore', g.blocked, '-inf', now, 'LIMIT', 0, DELAYQ_GROUP_MOVE)
  for _, key in ipairs(free) do
    redis.call('zrem', g.blocked, key)
    if not seen[key] then seen[key] = true; touched[#touched + 1] = key end
  end
  for _, key in ipairs(touched) do delayq_group_runnable(g, key) end
end

-- The key's rate limit (GCRA, the server's clock): nil when a value may
-- start now (the limit's time moves on), else the ms it may.
local function delayq_group_rate(g, key, now, cfg)
  local interval = cfg.rate_ms / cfg.rate_n
  local tat = math.max(tonumber(redis.call('hget', g.state, 'r:' .. key) or '0'), now)
  local allowed = tat - (cfg.rate_ms - interval)
  if allowed > now then return allowed end
  redis.call('hset', g.state, 'r:' .. key, string.format('%.0f', tat + interval))
  return nil
end

-- Drops rate-limit times already passed (they limit nothing), a few fields
-- a claim (HSCAN from a kept cursor), so keys that ran once under a rate
-- limit leave no field behind.
local function delayq_group_sweep_rates(g, now)
  local scanned = redis.call('hscan', g.state, redis.call('hget', g.state, 'rc') or '0', 'MATCH', 'r:*', 'COUNT', 50)
  redis.call('hset', g.state, 'rc', scanned[1])
  local gone, fields = {}, scanned[2]
  for i = 1, #fields, 2 do
    local tat = tonumber(fields[i + 1])
    if tat and tat <= now then gone[#gone + 1] = fields[i] end
  end
  if #gone > 0 then redis.call('hdel', g.state, unpack(gone)) end
end

-- Takes up to `n` values from the ring, one per key a turn, each passed to
-- take(payload, key, seq) while more() holds. Spends at most n +
-- DELAYQ_GROUP_MOVE turns (keys with nothing to run leave the ring).
local function delayq_group_take(g, n, now, take, more)
  local cfg = delayq_group_cfg(g)
  local taken, turns = 0, 0
  while taken < n and turns < n + DELAYQ_GROUP_MOVE and more() do
    local first = redis.call('zpopmin', g.ring, 1)
    if #first == 0 then break end
    turns = turns + 1
    local key = first[1]
    local head = delayq_group_head(g, key)
    local running = tonumber(redis.call('hget', g.state, 'n:' .. key) or '0')
    if head and running < cfg.concurrency then
      local wait = cfg.rate_n > 0 and cfg.rate_ms > 0 and delayq_group_rate(g, key, now, cfg)
      if wait then
        redis.call('zadd', g.blocked, wait, key)
      else
        redis.call('zrem', g.values, head)
        redis.call('hset', g.state, 'n:' .. key, running + 1)
        local _, seq, payload = delayq_group_parse(head)
        take(payload, key, seq)
        taken = taken + 1
        delayq_group_runnable(g, key)
      end
    end
  end
  return taken
end

-- A grouped delivery's lease ends: its key has one fewer in flight.
-- Returns the key and the value's seq (its place in the line), or nil for
-- a delivery that is not grouped (the caller then goes on as for any
-- delivery).
local function delayq_group_release(g, delivery)
  if not g then return nil end
  local field = redis.call('hget', g.state, 'd:' .. delivery)
  if not field then return nil end
  redis.call('hdel', g.state, 'd:' .. delivery)
  local seq, key = string.sub(field, 1, 16), string.sub(field, 17)
  if redis.call('hincrby', g.state, 'n:' .. key, -1) <= 0 then
    redis.call('hdel', g.state, 'n:' .. key)
    -- A rate time already passed limits nothing: a key that comes and goes
    -- leaves no field behind.
    local tat = tonumber(redis.call('hget', g.state, 'r:' .. key))
    if tat and tat <= delayq_server_ms() then redis.call('hdel', g.state, 'r:' .. key) end
  end
  return key, seq
end

-- One fewer in flight for a key whose value a claim took but did not
-- deliver (dead-lettered for its deliveries).
local function delayq_group_unclaimed(g, key)
  if redis.call('hincrby', g.state, 'n:' .. key, -1) <= 0 then
    redis.call('hdel', g.state, 'n:' .. key)
  end
  delayq_group_runnable(g, key)
end

-- A failed grouped value is retried after `delay` ms: under 'hold' it
-- waits in its place and the key is blocked until then (no later value of
-- the key runs first); under 'skip' it waits in the delayed set and rejoins
-- the end of its key's line when due, the key going on meanwhile.
local function delayq_group_retry(g, key, seq, payload, delay, now)
  if delayq_group_cfg(g).hold then
    delayq_group_add(g, key, payload, seq)
    redis.call('zadd', g.blocked, now + delay, key)
    redis.call('zrem', g.ring, key)
  else
    redis.call('zadd', g.delayed, now + delay, delayq_group_prefix(key) .. delayq_group_next_seq(g) .. payload)
    delayq_group_runnable(g, key)
  end
end
