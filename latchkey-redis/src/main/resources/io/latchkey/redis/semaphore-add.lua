-- Changes the available permits of a counting semaphore and, when it grows, wakes one waiter per
-- added permit (io.latchkey.spi.SemaphoreStore#addPermits).
-- KEYS[1] available permits, KEYS[2] wake-up channel
-- ARGV[1] the change
redis.call('INCRBY', KEYS[1], ARGV[1])
if tonumber(ARGV[1]) > 0 then
  publish(KEYS[2], ARGV[1], nil)
end
return 1
