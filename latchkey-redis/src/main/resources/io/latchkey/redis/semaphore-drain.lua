-- Takes every available permit of a counting semaphore (io.latchkey.spi.SemaphoreStore
-- #drainPermits). A count that is not positive is left as it was.
-- KEYS[1] available permits
-- Returns how many were taken.
local available = tonumber(redis.call('GET', KEYS[1]) or '0')
if available <= 0 then
  return 0
end
redis.call('SET', KEYS[1], '0')
return available
