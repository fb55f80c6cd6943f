-- Deletes a latch whatever its count and, if it was counting down, wakes every waiter as at zero
-- (io.latchkey.spi.LatchStore#deleteLatch).
-- KEYS[1] count, KEYS[2] wake-up channel
-- Returns 1 if it was counting down, else 0.
if redis.call('DEL', KEYS[1]) == 0 then
  return 0
end
publish(KEYS[2], 'all', nil)
return 1
