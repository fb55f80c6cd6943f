-- Changes the total of a leased semaphore and, when it grows, wakes one waiter per added permit
-- (io.latchkey.spi.LeasedSemaphoreStore#addPermits). A total is a Java int: a change that would
-- take it out of [-2^31, 2^31 - 1] changes nothing (the client refuses it).
-- KEYS[1] settings ('total' permits, 'fence' counter), KEYS[2] wake-up channel
-- ARGV[1] the change
-- Returns {1, total before} if changed, {0, total before} if refused.
local delta = tonumber(ARGV[1])
local before = tonumber(redis.call('HGET', KEYS[1], 'total') or '0')
local after = before + delta
if after < -2147483648 or after > 2147483647 then
  return {0, before}
end
redis.call('HINCRBY', KEYS[1], 'total', ARGV[1])
if delta > 0 then
  publish(KEYS[2], ARGV[1], nil)
end
return {1, before}
