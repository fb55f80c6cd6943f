-- Extends many leases at once (io.latchkey.spi.LatchkeyBackend#renew): lock holders and leased
-- permits alike, since both records start with their deadline. Never shortens a lease.
-- KEYS[i] the record hash (a lock's holders or a semaphore's permits) of the i-th holder
-- ARGV[1] lease ms, ARGV[i + 1] the i-th holder's owner or permit id
-- Returns the indexes (from 1) of the holders that are no longer held.
local now = now_millis()
local lease = tonumber(ARGV[1])
local deadline = now + lease
local deadline_text = int(deadline)
-- Redis 7 and later (the only ones that tell their version to scripts) extend an expiry without
-- reading it first: PEXPIRE ... GT never shortens it.
local extend_only = redis.REDIS_VERSION_NUM ~= nil
-- The keys whose expiry this run already extended (to the same deadline).
local extended = {}
local gone = {}
for i, key in ipairs(KEYS) do
  local id = ARGV[i + 1]
  local record = redis.call('HGET', key, id)
  local expires_text = record and string.match(record, '^(%d+):')
  local expires = tonumber(expires_text)
  if not expires or expires <= now then
    gone[#gone + 1] = i
  elseif deadline > expires then
    redis.call('HSET', key, id, deadline_text .. string.sub(record, #expires_text + 1))
    if not extended[key] then
      extended[key] = true
      if extend_only then
        redis.call('PEXPIRE', key, lease, 'GT')
      elseif redis.call('PTTL', key) < lease then
        redis.call('PEXPIRE', key, lease)
      end
    end
  end
end
return gone
