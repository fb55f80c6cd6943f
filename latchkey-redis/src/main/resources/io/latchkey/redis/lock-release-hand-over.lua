-- Removes one hold of a grant and, when the lock becomes acquirable for others and the head of the
-- wait queue is the given waiter of the releasing client (or nobody is queued), makes that
-- waiter's acquire attempt in the same step, instead of waking it
-- (io.latchkey.spi.LockStore#releaseAndHandOver); any other head is woken as lock-release.lua
-- wakes it.
-- KEYS[1] holders, KEYS[2] fencing counter, KEYS[3] wait queue, KEYS[4] queue deadlines,
-- KEYS[5] queued writers, KEYS[6] wake-up channel, KEYS[7] hand-off
-- ARGV[1] owner, ARGV[2] 'x' or 's', ARGV[3] the grant's fencing token (or '0'), as lock-release;
-- ARGV[4..10] the waiter's request as ARGV[1..7] of lock-acquire.lua
-- Returns the remaining holds in that mode (-1: the owner held none under that grant), and, if the
-- waiter's attempt was made, '/' and its acquire_reply.
local exclusive = ARGV[2] == 'x'
local now = now_millis()
local holders = read_holders(KEYS[1], now)
local remaining = release_hold(KEYS[1], holders, ARGV[1], exclusive, tonumber(ARGV[3]), now)
if remaining ~= 0 then
  return int(remaining)
end
local request = { owner = ARGV[4], exclusive = ARGV[5] == 'x', lease_ms = tonumber(ARGV[6]),
                  fair = ARGV[7] == '1', keep_alive = tonumber(ARGV[8]), client = ARGV[9],
                  handoff_ms = tonumber(ARGV[10]) }
local attempt, queued = wake_queue_head(KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], holders,
                                        exclusive, now, request.owner)
if not attempt then
  return '0'
end
if queued then
  -- The waiter comes for the turn it would have been woken for: a hand-off pending for anyone else
  -- is over, as a wake-up of this waiter would have ended it. (With nobody queued, no hand-off is
  -- pending for a live waiter.)
  redis.call('DEL', KEYS[7])
end
return '0/' .. acquire_lock(lock_keys(), request, holders, now, true)
