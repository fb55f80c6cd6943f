-- One acquire attempt on a lock (the grant and queue rules of io.latchkey.spi.LockRequest).
-- KEYS[1] holders, KEYS[2] fencing counter, KEYS[3] wait queue, KEYS[4] queue deadlines,
-- KEYS[5] queued writers, KEYS[6] wake-up channel, KEYS[7] hand-off
-- ARGV[1] owner, ARGV[2] 'x' (exclusive) or 's' (shared), ARGV[3] lease ms, ARGV[4] '1' if fair,
-- ARGV[5] queue keep-alive ms (0: do not queue), ARGV[6] client id, ARGV[7] hand-off ms
-- Returns acquire_reply(status, token, holds, retryAfterMillis); status 1 granted, 0 busy,
-- 2 upgrade refused.
local now = now_millis()
local request = { owner = ARGV[1], exclusive = ARGV[2] == 'x', lease_ms = tonumber(ARGV[3]),
                  fair = ARGV[4] == '1', keep_alive = tonumber(ARGV[5]), client = ARGV[6],
                  handoff_ms = tonumber(ARGV[7]) }
return acquire_lock(lock_keys(), request, read_holders(KEYS[1], now), now, false)
