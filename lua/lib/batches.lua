-- Batches (DelayedQueue::offer_batch, src/queue/delayed/batches.rs): jobs
-- offered together, each under the id <batch>/<index>; once every one has
-- ended (handled, dead-lettered or cancelled: its first such end counts),
-- the batch is complete, and its completion is offered to a queue of
-- choice, once (src/queue/reliable/batch_outbox.rs). Counted where the
-- jobs end, in the scripts that end them (lib/jobs.lua knows each
-- delivery's job), so a member counts once: a delivery leaves the lease set
-- once, and a job ends once.
--   delayq_batches:{N} (HASH):
--     b:<batch>   its record (delayq_batches_text): state ('offering' while
--                 its offer runs, 'open', 'complete', 'delivered'), total,
--                 offered, handled, dead-lettered, cancelled, created ms,
--                 completed ms, how long it is kept once delivered (ms),
--                 the element format its members were offered in (the
--                 completion is written in it), then the completion's
--                 target queue ('' for none); \31 between.
--     d:<batch>   the completion's data (JSON), until it is delivered.
--     m:<id>      the batch of member job <id>; then \31 and how it ended
--                 ('h', 'd', 'c') once it is counted.
--   delayq_batch_outbox:{N} (ZSET): complete batches whose completion is not
--     offered yet -> ms they completed.
--   delayq_batches_expiry:{N} (ZSET): field -> ms it goes: a delivered (or
--     target-less complete) batch's record, and each member's field
--     DELAYQ_BATCH_MEMBER_TTL after its offer. Reaped a few at a time by the
--     scripts that write.
-- Java sees the members as any job's elements (a Java consumer may take
-- one, which then never counts); it never sees these keys.

local DELAYQ_BATCH_MEMBER_TTL = 30 * 86400000
local DELAYQ_BATCH_REAP = 8
local DELAYQ_BATCH_REAP_MOST = 512

local function delayq_batches_text(r)
  return table.concat({r.s, r.total, r.offered, r.h, r.d, r.c, r.created, r.completed, r.keep, r.format, r.target}, '\31')
end

local function delayq_batches_parse(raw)
  if not raw then return nil end
  local s, total, offered, h, d, c, created, completed, keep, format, target =
    string.match(raw, '^([^\31]*)\31(%d+)\31(%d+)\31(%d+)\31(%d+)\31(%d+)\31(%d+)\31(%d+)\31(%d+)\31(%a*)\31(.*)$')
  if not s then return nil end
  return {s = s, total = tonumber(total), offered = tonumber(offered), h = tonumber(h), d = tonumber(d),
    c = tonumber(c), created = created, completed = completed, keep = tonumber(keep), format = format, target = target}
end

-- Drops expired fields: DELAYQ_BATCH_REAP a call, and one more for each
-- field the call wrote (`written`).
local function delayq_batches_reap(hash, expiry, now, written)
  local most = math.min(DELAYQ_BATCH_REAP + (written or 0), DELAYQ_BATCH_REAP_MOST)
  local old = redis.call('zrangebyscore', expiry, '-inf', now, 'LIMIT', 0, most)
  if #old > 0 then
    redis.call('hdel', hash, unpack(old))
    redis.call('zrem', expiry, unpack(old))
  end
end

-- The batch keys a script was given at KEYS[at] (hash, outbox, expiry),
-- with its events: nil when not given (a run by hand with older keys) or
-- when the queue never had a batch (one EXISTS).
local function delayq_batches_open(at, events, stream)
  local hash = KEYS[at]
  if not hash or not KEYS[at + 2] or redis.call('exists', hash) == 0 then return nil end
  return {hash = hash, outbox = KEYS[at + 1], expiry = KEYS[at + 2], events = events, stream = stream}
end

-- A batch whose members have all ended completes: its completion waits in
-- the outbox (none without a target: it is kept as a delivered one is).
local function delayq_batches_complete_if_done(b, bid, r, now)
  if r.s ~= 'open' or r.h + r.d + r.c < r.total then return false end
  r.s, r.completed = 'complete', string.format('%.0f', now)
  if r.target ~= '' then
    redis.call('zadd', b.outbox, now, bid)
  else
    r.s = 'delivered'
    redis.call('zadd', b.expiry, now + r.keep, 'b:' .. bid)
  end
  delayq_event(b.events, b.stream, 'batch_completed', 'batch', bid, 'handled', r.h, 'dead_lettered', r.d, 'cancelled', r.c)
  return true
end

-- Jobs `ids` ended, each how (`hows[i]`, or `how` for all: 'h' handled,
-- 'd' dead-lettered, 'c' cancelled): the members among them are counted
-- in their batches, once each, and a batch they complete goes to the
-- outbox. One HMGET for the members, one read and write per batch.
-- Returns how many batches they completed.
local function delayq_batches_ended(b, ids, how, now, hows)
  if not b or #ids == 0 then return 0 end
  local fields = {}
  for i = 1, #ids do fields[i] = 'm:' .. ids[i] end
  local members = {}
  for i = 1, #fields, 4000 do
    local part = redis.call('hmget', b.hash, unpack(fields, i, math.min(i + 3999, #fields)))
    for j = 1, #part do members[i + j - 1] = part[j] end
  end
  local counts, order, marks = {}, {}, {}
  for i = 1, #ids do
    local bid = members[i]
    -- Not a member, or counted already (its first end counts).
    if bid and not string.find(bid, '\31', 1, true) then
      local kind = hows and hows[i] or how
      if not counts[bid] then
        counts[bid] = {h = 0, d = 0, c = 0}
        order[#order + 1] = bid
      end
      counts[bid][kind] = counts[bid][kind] + 1
      marks[#marks + 1] = fields[i]
      marks[#marks + 1] = bid .. '\31' .. kind
    end
  end
  if #marks == 0 then return 0 end
  for i = 1, #marks, 4000 do
    redis.call('hset', b.hash, unpack(marks, i, math.min(i + 3999, #marks)))
  end
  local completed = 0
  for _, bid in ipairs(order) do
    local r = delayq_batches_parse(redis.call('hget', b.hash, 'b:' .. bid))
    if r then
      local n = counts[bid]
      r.h, r.d, r.c = r.h + n.h, r.d + n.d, r.c + n.c
      if delayq_batches_complete_if_done(b, bid, r, now) then completed = completed + 1 end
      redis.call('hset', b.hash, 'b:' .. bid, delayq_batches_text(r))
    end
  end
  delayq_batches_reap(b.hash, b.expiry, now, 0)
  return completed
end
