-- Changes the available permits of a counting semaphore and, when it grows, wakes one waiter per
-- added permit (io.latchkey.spi.SemaphoreStore#addPermits, and #addPermitsIfExists when ARGV[2] is
-- '1'). A count is a Java int: a change that would take it out of [-2^31, 2^31 - 1] changes
-- nothing (the client refuses it), so that no reader ever meets a count it cannot parse.
-- KEYS[1] available permits, KEYS[2] wake-up channel
-- ARGV[1] the change, ARGV[2] '1' to change only a semaphore that has a record, else '0'
-- Returns {1, count before} if changed, {0, count before} if refused, {2, 0} if there is no record
-- and ARGV[2] is '1'.
local delta = tonumber(ARGV[1])
local count = redis.call('GET', KEYS[1])
if count == false and ARGV[2] == '1' then
  return {2, 0}
end
local before = tonumber(count or '0')
local after = before + delta
if after < -2147483648 or after > 2147483647 then
  return {0, before}
end
redis.call('INCRBY', KEYS[1], ARGV[1])
if delta > 0 then
  publish(KEYS[2], ARGV[1], nil)
end
return {1, before}
