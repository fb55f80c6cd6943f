-- The totals and live permits of one or more leased semaphores
-- (io.latchkey.spi.AdminStore#inspectLeasedSemaphore).
-- KEYS[2i-1] settings ('total' permits, 'fence' counter), KEYS[2i] granted permits of the i-th
-- Returns one array per semaphore: empty if it has no total (never set, or deleted), else {total,
-- then per live permit: id, client id, remaining lease ms, token}, in grant order (by token; the
-- permits of one batch, which share a token, by id).
local now = now_millis()
local result = {}
for i = 1, #KEYS, 2 do
  local total = redis.call('HGET', KEYS[i], 'total')
  local info = {}
  if total then
    info[1] = tonumber(total)
    local permits = read_permits(KEYS[i + 1], now)
    local ids = {}
    for id, _ in pairs(permits.entries) do
      ids[#ids + 1] = id
    end
    table.sort(ids, function(a, b)
      local ta, tb = permits.entries[a].token, permits.entries[b].token
      if ta ~= tb then
        return ta < tb
      end
      return a < b
    end)
    for _, id in ipairs(ids) do
      local permit = permits.entries[id]
      append_all(info, { id, permit.client, permit.expires - now, permit.token })
    end
  end
  result[#result + 1] = info
end
return result
