-- latchkey: functions shared by every script. RedisScript prepends this file to each script's own
-- text when it loads it, so each script stays one self-contained EVALSHA.
--
-- Record formats (all numbers are decimal integers; times are milliseconds of the Redis clock):
--   lock holder     owner -> 'expiresAt:token:exclusiveHolds:sharedHolds:clientId'
--   fair queue      owner -> 'arrival:deadline' (arrival orders the queue; deadline drops it)
--   leased permit   permit id -> 'expiresAt:token'
-- Every record starts with its deadline, so the renewal script treats holders and permits alike.

local function now_millis()
  local time = redis.call('TIME')
  return tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end

local function int(number)
  return string.format('%d', number)
end

-- Makes a key live until the latest deadline of its records, so that an abandoned record
-- disappears by itself; does nothing when no record is left.
local function expire_at(key, latest, now)
  if latest > now then
    redis.call('PEXPIRE', key, latest - now)
  end
end

-- The live holders of a lock, owner -> holder; expired ones are deleted on the way.
local function read_holders(key, now)
  local fields = redis.call('HGETALL', key)
  local holders = {}
  for i = 1, #fields, 2 do
    local expires, token, exclusive, shared, client =
      string.match(fields[i + 1], '^(%d+):(%d+):(%d+):(%d+):(.*)$')
    expires = tonumber(expires)
    if expires <= now then
      redis.call('HDEL', key, fields[i])
    else
      holders[fields[i]] = {
        expires = expires,
        token = tonumber(token),
        exclusive = tonumber(exclusive),
        shared = tonumber(shared),
        client = client
      }
    end
  end
  return holders
end

local function write_holder(key, owner, holder)
  redis.call('HSET', key, owner, int(holder.expires) .. ':' .. int(holder.token) .. ':'
    .. int(holder.exclusive) .. ':' .. int(holder.shared) .. ':' .. holder.client)
end

local function latest_expiry(holders)
  local latest = 0
  for _, holder in pairs(holders) do
    latest = math.max(latest, holder.expires)
  end
  return latest
end

-- The live entries of a fair queue; entries past their deadline are deleted on the way.
local function read_queue(key, now)
  local fields = redis.call('HGETALL', key)
  local queue = { entries = {}, size = 0, last_arrival = 0, latest = 0 }
  for i = 1, #fields, 2 do
    local arrival, deadline = string.match(fields[i + 1], '^(%d+):(%d+)$')
    arrival = tonumber(arrival)
    deadline = tonumber(deadline)
    if deadline <= now then
      redis.call('HDEL', key, fields[i])
    else
      queue.entries[fields[i]] = { arrival = arrival, deadline = deadline }
      queue.size = queue.size + 1
      queue.last_arrival = math.max(queue.last_arrival, arrival)
      queue.latest = math.max(queue.latest, deadline)
    end
  end
  return queue
end

-- The owner that arrived first, or nil for an empty queue.
local function queue_head(queue)
  local head, first = nil, nil
  for owner, entry in pairs(queue.entries) do
    if first == nil or entry.arrival < first then
      head, first = owner, entry.arrival
    end
  end
  return head
end

local function leave_queue(key, queue, owner)
  if queue.entries[owner] ~= nil then
    queue.entries[owner] = nil
    queue.size = queue.size - 1
    redis.call('HDEL', key, owner)
  end
end

-- The live permits of a leased semaphore; expired ones are deleted on the way.
local function read_permits(key, now)
  local fields = redis.call('HGETALL', key)
  local permits = { entries = {}, count = 0, earliest = nil, latest = 0 }
  for i = 1, #fields, 2 do
    local expires, token = string.match(fields[i + 1], '^(%d+):(%d+)$')
    expires = tonumber(expires)
    if expires <= now then
      redis.call('HDEL', key, fields[i])
    else
      permits.entries[fields[i]] = { expires = expires, token = tonumber(token) }
      permits.count = permits.count + 1
      permits.latest = math.max(permits.latest, expires)
      if permits.earliest == nil or expires < permits.earliest then
        permits.earliest = expires
      end
    end
  end
  return permits
end

-- A wake-up: '<slots>' or '<slots> <owner>', where slots is a count or 'all'.
local function publish(channel, slots, owner)
  if owner == nil then
    redis.call('PUBLISH', channel, slots)
  else
    redis.call('PUBLISH', channel, slots .. ' ' .. owner)
  end
end

