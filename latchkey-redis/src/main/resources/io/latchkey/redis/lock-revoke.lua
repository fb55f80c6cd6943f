-- Asks every live holder of a lock to give it up (io.latchkey.spi.LockStore#requestRevocation):
-- sends each holder's client, on its own channel ARGV[1] .. clientId, the message
-- '<token> <owner> <name>' naming the holder's grant. Releases nothing. Always PUBLISH, never
-- SPUBLISH: a client listens on one channel for the grants of every lock it holds, which in a
-- cluster live in every slot.
-- KEYS[1] holders
-- ARGV[1] the prefix of the clients' revocation channels, ARGV[2] the lock name
-- Returns how many holders were asked: 0 if nobody holds the lock.
local holders = read_holders(KEYS[1], now_millis())
local asked = 0
for owner, holder in pairs(holders) do
  redis.call('PUBLISH', ARGV[1] .. holder.client, int(holder.token) .. ' ' .. owner .. ' ' .. ARGV[2])
  asked = asked + 1
end
return asked
