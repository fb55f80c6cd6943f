-- Reads and raises the epoch record of this server (io.latchkey.spi.FenceStore#epoch;
-- docs/adr/0009-quorum-fencing.md). The record never expires, so it is gone only if the data is:
-- a server restarted without its data has none.
-- KEYS[1] the epoch record, KEYS[2] its quarantine marker
-- ARGV[1] the lowest value the record may have afterwards (0: only read)
-- ARGV[2] how long a record created now stays quarantined, in milliseconds of the Redis clock
--         (0: no quarantine)
-- Returns {epoch, quarantine milliseconds left}.
local epoch = tonumber(redis.call('GET', KEYS[1]) or '0')
local wanted = tonumber(ARGV[1])
if epoch == 0 and wanted > 0 and tonumber(ARGV[2]) > 0 then
  redis.call('SET', KEYS[2], '1', 'PX', ARGV[2])
end
if wanted > epoch then
  redis.call('SET', KEYS[1], ARGV[1])
  epoch = wanted
end
local left = redis.call('PTTL', KEYS[2])
if left < 0 then
  left = 0
end
return {epoch, left}
