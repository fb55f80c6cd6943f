-- The free permits of a leased semaphore: the total minus the unexpired granted permits; negative
-- when the total was lowered below the number granted, as for the counting semaphore
-- (io.latchkey.spi.LeasedSemaphoreStore#availablePermits).
-- KEYS[1] settings ('total' permits, 'fence' counter), KEYS[2] granted permits
local total = tonumber(redis.call('HGET', KEYS[1], 'total') or '0')
return total - read_permits(KEYS[2], now_millis()).count
