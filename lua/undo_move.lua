-- LIBS: (none)
-- Undoes a move (LMOVE, BLMOVE) whose taker stopped waiting before it saw
-- the reply: the value leaves the list it was moved to and goes back to the
-- end of the list it came from, so a cancelled take leaves both lists as
-- they were.
-- KEYS: 1 source list (the value came from), 2 target list (it was moved to)
-- ARGV[1] the value, ARGV[2] the source's end it was taken from (LEFT|RIGHT),
-- ARGV[3] the end of KEYS[2] it was put on. Returns 1, or 0 if it was gone.
local count = 1
if ARGV[3] == 'RIGHT' then
  count = -1
end
if redis.call('LREM', KEYS[2], count, ARGV[1]) == 0 then
  return 0
end
if ARGV[2] == 'LEFT' then
  redis.call('LPUSH', KEYS[1], ARGV[1])
else
  redis.call('RPUSH', KEYS[1], ARGV[1])
end
return 1
