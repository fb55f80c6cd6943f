-- Extends many leases at once (io.latchkey.spi.LatchkeyBackend#renew): lock holders and leased
-- permits alike, since both records start with 'expiresAt:token'. Never shortens a lease. A grant
-- is renewed only if its record still carries its fencing token: a record with another token is a
-- later grant to the same owner, and the old grant is gone.
-- KEYS[i] the record hash (a lock's holders or a semaphore's permits) of the i-th grant
-- ARGV[1] lease ms, ARGV[2i] the i-th grant's owner or permit id, ARGV[2i + 1] its token
-- Returns the indexes (from 1) of the grants that are no longer held.
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
  local id = ARGV[2 * i]
  local record = redis.call('HGET', key, id)
  local expires_text, token_text = nil, nil
  if record then
    expires_text, token_text = string.match(record, '^(%d+):(%d+)')
  end
  local expires = tonumber(expires_text)
  if not expires or expires <= now or token_text ~= ARGV[2 * i + 1] then
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
