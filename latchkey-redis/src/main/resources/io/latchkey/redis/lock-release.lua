-- Removes one hold of a grant and, when the lock becomes acquirable for others, wakes the head of
-- the wait queue (io.latchkey.spi.LockStore#release).
-- KEYS[1] holders, KEYS[2] wait queue, KEYS[3] queue deadlines, KEYS[4] queued writers,
-- KEYS[5] wake-up channel, KEYS[6] hand-off
-- ARGV[1] owner, ARGV[2] 'x' (exclusive) or 's' (shared), ARGV[3] the grant's fencing token, or
-- '0' for whatever grant the owner has (a token owner releasing another process's grant)
-- Returns the remaining holds in that mode, or -1 if the owner held none under that grant: a
-- record with another token is a later grant to the same owner and is left alone.
local owner = ARGV[1]
local exclusive = ARGV[2] == 'x'
local token = tonumber(ARGV[3])
local now = now_millis()
local holders = read_holders(KEYS[1], now)
local me = holders[owner]
if me == nil or (token ~= 0 and me.token ~= token) then
  return -1
end

local remaining
if exclusive then
  if me.exclusive == 0 then
    return -1
  end
  me.exclusive = me.exclusive - 1
  remaining = me.exclusive
else
  if me.shared == 0 then
    return -1
  end
  me.shared = me.shared - 1
  remaining = me.shared
end

if me.exclusive == 0 and me.shared == 0 then
  holders[owner] = nil
  redis.call('HDEL', KEYS[1], owner)
  expire_at(KEYS[1], latest_expiry(holders), now)
else
  write_holder(KEYS[1], owner, me)
end

if remaining == 0 then
  wake_queue_head(KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], holders, exclusive, now)
end
return remaining
