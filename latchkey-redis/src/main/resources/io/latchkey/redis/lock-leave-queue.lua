-- A waiter gives up: leaves the wait queue and, if it was the head and nobody holds the lock
-- exclusively, wakes the next head (io.latchkey.spi.LockStore#leaveQueue).
-- KEYS[1] holders, KEYS[2] wait queue, KEYS[3] queue deadlines, KEYS[4] queued writers,
-- KEYS[5] wake-up channel, KEYS[6] hand-off (ended if it was this owner's)
-- ARGV[1] owner
-- Returns 1 if the owner was queued, else 0.
local owner = ARGV[1]
local now = now_millis()
purge_queue(KEYS[2], KEYS[3], KEYS[4], now)
if not is_queued(KEYS[2], owner) then
  return 0
end
local was_head = queue_head(KEYS[2]) == owner
dequeue(KEYS[2], KEYS[3], KEYS[4], owner, now, false)
if read_handoff(KEYS[6]) == owner then
  redis.call('DEL', KEYS[6])
end
if was_head then
  local head = queue_head(KEYS[2])
  if head ~= nil and not exclusive_held(read_holders(KEYS[1], now)) then
    wake(KEYS[6], KEYS[3], KEYS[5], head, now)
  end
end
return 1
