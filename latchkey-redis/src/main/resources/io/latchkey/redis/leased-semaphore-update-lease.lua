-- Sets a held permit's lease to end lease ms from now, sooner or later than before
-- (io.latchkey.spi.LeasedSemaphoreStore#updateLease).
-- KEYS[1] granted permits
-- ARGV[1] permit id, ARGV[2] lease ms
-- Returns 1 if the permit was held, else 0.
local now = now_millis()
local permits = read_permits(KEYS[1], now)
local permit = permits.entries[ARGV[1]]
if permit == nil then
  return 0
end
permit.expires = now + tonumber(ARGV[2])
write_permit(KEYS[1], ARGV[1], permit)
-- The key lives until the latest permit's deadline, which a shorter lease may have moved earlier.
local latest = 0
for _, entry in pairs(permits.entries) do
  latest = math.max(latest, entry.expires)
end
expire_at(KEYS[1], latest, now)
return 1
