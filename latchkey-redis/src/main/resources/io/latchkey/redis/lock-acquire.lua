-- One acquire attempt on a lock (the grant rules of io.latchkey.spi.LockRequest).
-- KEYS[1] holders, KEYS[2] fencing counter, KEYS[3] fair queue
-- ARGV[1] owner, ARGV[2] 'x' (exclusive) or 's' (shared), ARGV[3] lease ms, ARGV[4] '1' if fair,
-- ARGV[5] queue keep-alive ms, ARGV[6] client id
-- Returns {status, token, holds, retryAfterMillis}; status 1 granted, 0 busy, 2 upgrade refused.
local owner = ARGV[1]
local exclusive = ARGV[2] == 'x'
local fair = ARGV[4] == '1'
local now = now_millis()
local holders = read_holders(KEYS[1], now)
local me = holders[owner]

if exclusive and me ~= nil and me.exclusive == 0 and me.shared > 0 then
  return { 2, 0, 0, -1 }
end

local blocked = false
local obstacle_ends = -1
for id, holder in pairs(holders) do
  if id ~= owner and (exclusive or holder.exclusive > 0) then
    blocked = true
    obstacle_ends = math.max(obstacle_ends, holder.expires - now)
  end
end

local queue = nil
if fair then
  queue = read_queue(KEYS[3], now)
end
local behind_others = false
if fair and me == nil and not blocked then
  local head = queue_head(queue)
  behind_others = head ~= nil and head ~= owner
end

if blocked or behind_others then
  if fair then
    -- A waiter already queued keeps its place; only its deadline moves.
    local entry = queue.entries[owner]
    local arrival = entry and entry.arrival or queue.last_arrival + 1
    local deadline = now + tonumber(ARGV[5])
    redis.call('HSET', KEYS[3], owner, int(arrival) .. ':' .. int(deadline))
    expire_at(KEYS[3], math.max(queue.latest, deadline), now)
  end
  if blocked then
    return { 0, 0, 0, obstacle_ends }
  end
  return { 0, 0, 0, -1 }
end

redis.call('HDEL', KEYS[3], owner)
if me == nil then
  me = { expires = 0, token = redis.call('INCR', KEYS[2]), exclusive = 0, shared = 0, client = ARGV[6] }
  holders[owner] = me
end
local holds
if exclusive then
  me.exclusive = me.exclusive + 1
  holds = me.exclusive
else
  me.shared = me.shared + 1
  holds = me.shared
end
-- A re-entry never shortens the lease.
me.expires = math.max(me.expires, now + tonumber(ARGV[3]))
write_holder(KEYS[1], owner, me)
expire_at(KEYS[1], latest_expiry(holders), now)
return { 1, me.token, holds, -1 }
