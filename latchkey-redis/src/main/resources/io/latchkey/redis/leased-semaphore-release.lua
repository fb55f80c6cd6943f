-- Frees a leased permit and wakes one waiter (io.latchkey.spi.LeasedSemaphoreStore#release).
-- KEYS[1] granted permits, KEYS[2] wake-up channel
-- ARGV[1] permit id
-- Returns 1 if the permit was held, else 0.
local permits = read_permits(KEYS[1], now_millis())
if permits.entries[ARGV[1]] == nil then
  return 0
end
redis.call('HDEL', KEYS[1], ARGV[1])
publish(KEYS[2], '1', nil)
return 1
