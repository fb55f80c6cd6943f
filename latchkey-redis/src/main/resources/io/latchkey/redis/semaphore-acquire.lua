-- Takes permits of a counting semaphore if that many are available
-- (io.latchkey.spi.SemaphoreStore#tryAcquire).
-- KEYS[1] available permits
-- ARGV[1] permits to take
-- Returns 1 if taken, else 0.
local wanted = tonumber(ARGV[1])
if tonumber(redis.call('GET', KEYS[1]) or '0') < wanted then
  return 0
end
redis.call('DECRBY', KEYS[1], wanted)
return 1
