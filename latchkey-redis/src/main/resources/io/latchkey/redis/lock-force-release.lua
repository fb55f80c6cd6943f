-- Removes every holder of a lock and wakes all waiters (io.latchkey.spi.LockStore#forceRelease).
-- The wait queue keeps its live places.
-- KEYS[1] holders, KEYS[2] wait queue, KEYS[3] wake-up channel
-- Returns 1 if anyone held the lock, else 0.
if redis.call('EXISTS', KEYS[1], KEYS[2]) == 0 then
  return 0
end
local held = next(read_holders(KEYS[1], now_millis())) ~= nil
redis.call('DEL', KEYS[1])
publish(KEYS[3], 'all', nil)
if held then
  return 1
end
return 0
