-- A fair waiter gives up: leaves the queue, and if it was at the head of the queue of a free lock,
-- wakes the next one (io.latchkey.spi.LockStore#leaveQueue).
-- KEYS[1] holders, KEYS[2] fair queue, KEYS[3] wake-up channel
-- ARGV[1] owner
-- Returns 1 if the owner was queued, else 0.
local owner = ARGV[1]
local now = now_millis()
local queue = read_queue(KEYS[2], now)
if queue.entries[owner] == nil then
  return 0
end
local was_head = queue_head(queue) == owner
leave_queue(KEYS[2], queue, owner)
if was_head then
  local head = queue_head(queue)
  if head ~= nil and next(read_holders(KEYS[1], now)) == nil then
    publish(KEYS[3], '1', head)
  end
end
return 1
