-- One acquire attempt on a lock (the grant and queue rules of io.latchkey.spi.LockRequest).
-- KEYS[1] holders, KEYS[2] fencing counter, KEYS[3] wait queue, KEYS[4] queue deadlines,
-- KEYS[5] queued writers, KEYS[6] wake-up channel, KEYS[7] hand-off
-- ARGV[1] owner, ARGV[2] 'x' (exclusive) or 's' (shared), ARGV[3] lease ms, ARGV[4] '1' if fair,
-- ARGV[5] queue keep-alive ms (0: do not queue), ARGV[6] client id, ARGV[7] hand-off ms
-- Returns acquire_reply(status, token, holds, retryAfterMillis); status 1 granted, 0 busy,
-- 2 upgrade refused.
local owner = ARGV[1]
local exclusive = ARGV[2] == 'x'
local fair = ARGV[4] == '1'
local keep_alive = tonumber(ARGV[5])
local handoff_ms = tonumber(ARGV[7])
local now = now_millis()
local holders = read_holders(KEYS[1], now)
local me = holders[owner]

if exclusive and me ~= nil and me.exclusive == 0 and me.shared > 0 then
  return acquire_reply(2, 0, 0, -1)
end

local blocked = false
local obstacle_ends = -1
for id, holder in pairs(holders) do
  if id ~= owner and (exclusive or holder.exclusive > 0) then
    blocked = true
    obstacle_ends = math.max(obstacle_ends, holder.expires - now)
  end
end

local behind_others = false
-- The owner last woken came: its hand-off is over, granted or not.
local woken = read_handoff(KEYS[7])
if woken == owner then
  redis.call('DEL', KEYS[7])
elseif woken ~= nil and me == nil and not blocked then
  -- A free lock is kept for a woken owner until its hand-off runs out; then it is served next.
  local kept_for, kept_ms =
    pending_handoff(KEYS[7], KEYS[3], KEYS[4], KEYS[5], KEYS[6], owner, handoff_ms, now)
  if kept_for == owner then
    redis.call('DEL', KEYS[7])
  elseif kept_for ~= nil and (exclusive or is_writer(KEYS[5], kept_for)) then
    behind_others = true
    obstacle_ends = kept_ms
  end
end
-- Whether the queue may hold this owner; a fair first attempt sees that it is empty.
local may_be_queued = true
if fair and me == nil and not blocked then
  local head = live_queue_head(KEYS[3], KEYS[4], KEYS[5], now)
  behind_others = head ~= nil and head ~= owner
  may_be_queued = head ~= nil
end
if not exclusive and me == nil and not blocked then
  -- Writers are preferred (docs/adr/0006-read-write-locks-prefer-writers.md): a new reader waits
  -- behind a queued writer, until that writer's place ends if it stops renewing it.
  local writer_place_ends = writer_ahead(KEYS[3], KEYS[4], KEYS[5], owner, now)
  if writer_place_ends >= 0 then
    behind_others = true
    obstacle_ends = writer_place_ends
  end
end

if blocked or behind_others then
  if keep_alive > 0 then
    -- A waiter already queued keeps its place; only its deadline moves.
    enqueue(KEYS[3], KEYS[4], KEYS[5], owner, exclusive, keep_alive, now)
  end
  return acquire_reply(0, 0, 0, obstacle_ends)
end

local was_queued = may_be_queued and dequeue(KEYS[3], KEYS[4], KEYS[5], owner, now, not exclusive)
if me == nil then
  me = { expires = 0, token = next_token(KEYS[2]), exclusive = 0, shared = 0, client = ARGV[6] }
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
if not exclusive and was_queued then
  -- A queued reader entered: the reader behind it may enter beside it (a writer may not).
  local next_waiter, place_ends = live_queue_head(KEYS[3], KEYS[4], KEYS[5], now)
  if next_waiter ~= nil and not is_writer(KEYS[5], next_waiter) then
    wake(KEYS[7], KEYS[4], KEYS[6], next_waiter, now, place_ends)
  end
end
return acquire_reply(1, me.token, holds, -1)
