-- Raises the fencing counter of a lock to at least ARGV[1], never lowering it
-- (io.latchkey.spi.FenceStore#raiseLockFence; docs/adr/0009-quorum-fencing.md).
-- KEYS[1] the lock's fencing counter (the one lock-acquire.lua counts up; it never expires)
-- ARGV[1] the lowest value it may have afterwards
-- Returns the counter after the call.
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
local wanted = tonumber(ARGV[1])
if wanted > current then
  redis.call('SET', KEYS[1], ARGV[1])
  return wanted
end
return current
