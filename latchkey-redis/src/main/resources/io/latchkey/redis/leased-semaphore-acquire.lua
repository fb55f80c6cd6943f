-- Grants a leased permit if one is free (io.latchkey.spi.LeasedSemaphoreStore#tryAcquire).
-- KEYS[1] settings ('total' permits, 'fence' counter), KEYS[2] granted permits
-- ARGV[1] permit id, ARGV[2] lease ms
-- Returns acquire_reply(status, token, holds, retryAfterMillis); status 1 granted, 0 busy.
local id = ARGV[1]
local now = now_millis()
local expires = now + tonumber(ARGV[2])
local permits = read_permits(KEYS[2], now)
local permit = permits.entries[id]
if permit ~= nil then
  -- The same attempt again (its answer was lost): extend, never shorten.
  permit.expires = math.max(permit.expires, expires)
else
  local total = tonumber(redis.call('HGET', KEYS[1], 'total') or '0')
  if total - permits.count <= 0 then
    if permits.earliest == nil then
      return acquire_reply(0, 0, 0, -1)
    end
    return acquire_reply(0, 0, 0, permits.earliest - now)
  end
  permit = { expires = expires, token = next_token(KEYS[1], 'fence') }
end
redis.call('HSET', KEYS[2], id, int(permit.expires) .. ':' .. int(permit.token))
expire_at(KEYS[2], math.max(permits.latest, permit.expires), now)
return acquire_reply(1, permit.token, 1, -1)
