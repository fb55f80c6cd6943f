-- Sets the available permits of a counting semaphore (creating its record) and, when positive,
-- wakes one waiter per available permit (io.latchkey.spi.SemaphoreStore#setPermits).
-- KEYS[1] available permits, KEYS[2] wake-up channel
-- ARGV[1] the permits, zero or more
-- Returns 1.
redis.call('SET', KEYS[1], ARGV[1])
if tonumber(ARGV[1]) > 0 then
  publish(KEYS[2], ARGV[1], nil)
end
return 1
