-- Writes (or rewrites, e.g. after a server restart) a client's presence record and its expiry.
-- KEYS[1] presence record
-- ARGV[1] host, ARGV[2] process id, ARGV[3] start time (epoch ms, by the client's clock),
-- ARGV[4] time to live ms
redis.call('HSET', KEYS[1], 'host', ARGV[1], 'pid', ARGV[2], 'started', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1
