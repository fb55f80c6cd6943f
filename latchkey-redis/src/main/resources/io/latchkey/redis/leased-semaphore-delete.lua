-- Deletes a leased semaphore: its total and every granted permit, but not its fencing counter, so
-- that later grants of the name still get growing tokens (io.latchkey.spi.LeasedSemaphoreStore
-- #delete; docs/adr/0002-redis-fencing-tokens.md).
-- KEYS[1] settings ('total' permits, 'fence' counter), KEYS[2] granted permits
-- Returns 1 if it had a total or a live permit, else 0.
local live = read_permits(KEYS[2], now_millis()).count
local had_total = redis.call('HDEL', KEYS[1], 'total')
redis.call('DEL', KEYS[2])
if had_total == 1 or live > 0 then
  return 1
end
return 0
