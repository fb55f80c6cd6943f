-- Frees one or more leased permits, all or none, and wakes one waiter per freed permit
-- (io.latchkey.spi.LeasedSemaphoreStore#release and #releaseAll).
-- KEYS[1] granted permits, KEYS[2] wake-up channel
-- ARGV[1..] the permit ids, without repeats
-- Returns 1 if every permit was held (they are now free), else 0 (nothing changed).
local permits = read_permits(KEYS[1], now_millis())
for _, id in ipairs(ARGV) do
  if permits.entries[id] == nil then
    return 0
  end
end
for first = 1, #ARGV, 1000 do
  redis.call('HDEL', KEYS[1], unpack(ARGV, first, math.min(first + 999, #ARGV)))
end
publish(KEYS[2], tostring(#ARGV), nil)
return 1
