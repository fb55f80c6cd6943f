-- The live holders and queue lengths of one or more locks (io.latchkey.spi.LockStore#inspect).
-- KEYS[4i-3] holders, KEYS[4i-2] wait queue, KEYS[4i-1] queue deadlines and KEYS[4i] queued
-- writers of the i-th lock
-- Returns one array per lock: {queued waiters, then per holding mode: owner, client id,
-- 'x' or 's', holds, remaining lease ms, token}. Holders come in grant order (by token), the
-- exclusive side of a holder before its shared side; an array of length 1 means nobody holds it.
local now = now_millis()
local result = {}
for i = 1, #KEYS, 4 do
  local holders = read_holders(KEYS[i], now)
  local owners = {}
  for owner, _ in pairs(holders) do
    owners[#owners + 1] = owner
  end
  table.sort(owners, function(a, b) return holders[a].token < holders[b].token end)
  purge_queue(KEYS[i + 1], KEYS[i + 2], KEYS[i + 3], now)
  local info = { redis.call('ZCARD', KEYS[i + 1]) }
  for _, owner in ipairs(owners) do
    local holder = holders[owner]
    for _, side in ipairs({ { 'x', holder.exclusive }, { 's', holder.shared } }) do
      if side[2] > 0 then
        append_all(info, { owner, holder.client, side[1], side[2], holder.expires - now, holder.token })
      end
    end
  end
  result[#result + 1] = info
end
return result
