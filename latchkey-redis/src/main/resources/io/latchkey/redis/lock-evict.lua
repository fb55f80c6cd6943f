-- Removes one holder entirely, every hold in every mode, and wakes the head of the wait queue if
-- the lock becomes acquirable for others (io.latchkey.spi.LockStore#evict).
-- KEYS[1] holders, KEYS[2] wait queue, KEYS[3] wake-up channel
-- ARGV[1] owner
-- Returns 1 if the owner held the lock, else 0.
local now = now_millis()
local holders = read_holders(KEYS[1], now)
if holders[ARGV[1]] == nil then
  return 0
end
holders[ARGV[1]] = nil
redis.call('HDEL', KEYS[1], ARGV[1])
expire_at(KEYS[1], latest_expiry(holders), now)
for _, holder in pairs(holders) do
  if holder.exclusive > 0 then
    return 1
  end
end
publish(KEYS[3], '1', queue_head(read_queue(KEYS[2], now)))
return 1
