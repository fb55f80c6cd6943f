-- Extends many leases at once (io.latchkey.spi.LatchkeyBackend#renew): lock holders and leased
-- permits alike, since both records start with their deadline. Never shortens a lease.
-- KEYS[i] the record hash (a lock's holders or a semaphore's permits) of the i-th holder
-- ARGV[1] lease ms, ARGV[i + 1] the i-th holder's owner or permit id
-- Returns the indexes (from 1) of the holders that are no longer held.
local now = now_millis()
local deadline = now + tonumber(ARGV[1])
local gone = {}
for i, key in ipairs(KEYS) do
  local id = ARGV[i + 1]
  local record = redis.call('HGET', key, id)
  local expires = record and tonumber(string.match(record, '^(%d+):'))
  if not expires or expires <= now then
    gone[#gone + 1] = i
  elseif deadline > expires then
    redis.call('HSET', key, id, int(deadline) .. string.sub(record, #int(expires) + 1))
    if redis.call('PTTL', key) < deadline - now then
      redis.call('PEXPIRE', key, deadline - now)
    end
  end
end
return gone
