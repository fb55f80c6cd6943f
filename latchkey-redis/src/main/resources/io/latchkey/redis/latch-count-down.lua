-- Counts a latch down by one; at zero deletes it and wakes every waiter
-- (io.latchkey.spi.LatchStore#countDown).
-- KEYS[1] count, KEYS[2] wake-up channel
-- Returns the count after the call.
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
if count <= 0 then
  return 0
end
if count == 1 then
  redis.call('DEL', KEYS[1])
  publish(KEYS[2], 'all', nil)
  return 0
end
return redis.call('DECR', KEYS[1])
