-- Grants one or more leased permits, all or none, if that many are free
-- (io.latchkey.spi.LeasedSemaphoreStore#tryAcquire and #tryAcquireAll). The permits of one call
-- share one fencing token.
-- KEYS[1] settings ('total' permits, 'fence' counter), KEYS[2] granted permits
-- ARGV[1] lease ms, ARGV[2] the id of the client asking (kept for inspection), ARGV[3..] the
-- permit ids, new random ones without repeats
-- Returns acquire_reply(status, token, holds, retryAfterMillis); status 1 granted (holds: the
-- number of permits), 0 busy.
local now = now_millis()
local expires = now + tonumber(ARGV[1])
local wanted = #ARGV - 2
local permits = read_permits(KEYS[2], now)
local latest = permits.latest
local first = permits.entries[ARGV[3]]
local token
if first ~= nil then
  -- The same attempt again (its answer was lost): extend its permits that are still live, never
  -- shorten them.
  token = first.token
  for i = 3, #ARGV do
    local permit = permits.entries[ARGV[i]]
    if permit ~= nil and permit.token == token and expires > permit.expires then
      permit.expires = expires
      write_permit(KEYS[2], ARGV[i], permit)
      latest = math.max(latest, expires)
    end
  end
else
  local total = tonumber(redis.call('HGET', KEYS[1], 'total') or '0')
  if total - permits.count < wanted then
    if permits.earliest == nil then
      return acquire_reply(0, 0, 0, -1)
    end
    return acquire_reply(0, 0, 0, permits.earliest - now)
  end
  token = next_token(KEYS[1], 'fence')
  for i = 3, #ARGV do
    write_permit(KEYS[2], ARGV[i], { expires = expires, token = token, client = ARGV[2] })
  end
  latest = math.max(latest, expires)
end
expire_at(KEYS[2], latest, now)
return acquire_reply(1, token, wanted, -1)
