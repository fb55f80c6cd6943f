-- Changes the total of a leased semaphore and, when it grows, wakes one waiter per added permit
-- (io.latchkey.spi.LeasedSemaphoreStore#addPermits).
-- KEYS[1] settings ('total' permits, 'fence' counter), KEYS[2] wake-up channel
-- ARGV[1] the change
redis.call('HINCRBY', KEYS[1], 'total', ARGV[1])
if tonumber(ARGV[1]) > 0 then
  publish(KEYS[2], ARGV[1], nil)
end
return 1
