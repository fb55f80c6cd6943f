-- Removes one hold of a grant and, when the lock becomes acquirable for others, wakes the head of
-- the wait queue (io.latchkey.spi.LockStore#release).
-- KEYS[1] holders, KEYS[2] wait queue, KEYS[3] queue deadlines, KEYS[4] queued writers,
-- KEYS[5] wake-up channel, KEYS[6] hand-off
-- ARGV[1] owner, ARGV[2] 'x' (exclusive) or 's' (shared), ARGV[3] the grant's fencing token, or
-- '0' for whatever grant the owner has (a token owner releasing another process's grant)
-- Returns the remaining holds in that mode, or -1 if the owner held none under that grant: a
-- record with another token is a later grant to the same owner and is left alone.
local exclusive = ARGV[2] == 'x'
local now = now_millis()
local holders = read_holders(KEYS[1], now)
local remaining = release_hold(KEYS[1], holders, ARGV[1], exclusive, tonumber(ARGV[3]), now)
if remaining == 0 then
  wake_queue_head(KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], holders, exclusive, now, nil)
end
return remaining
