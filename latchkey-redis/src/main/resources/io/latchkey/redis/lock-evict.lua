-- Removes one holder entirely, every hold in every mode, and wakes the head of the wait queue if
-- the lock becomes acquirable for others (io.latchkey.spi.LockStore#evict).
-- KEYS[1] holders, KEYS[2] wait queue, KEYS[3] queue deadlines, KEYS[4] queued writers,
-- KEYS[5] wake-up channel, KEYS[6] hand-off
-- ARGV[1] owner
-- Returns 1 if the owner held the lock, else 0.
local now = now_millis()
local holders = read_holders(KEYS[1], now)
local evicted = holders[ARGV[1]]
if evicted == nil then
  return 0
end
holders[ARGV[1]] = nil
redis.call('HDEL', KEYS[1], ARGV[1])
expire_at(KEYS[1], latest_expiry(holders), now)
wake_queue_head(KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], holders, evicted.exclusive > 0, now)
return 1
