-- latchkey: functions shared by every script. RedisScript prepends this file to each script's own
-- text when it loads it, so each script stays one self-contained EVALSHA. In front of this file it
-- puts one line that sets PUBLISH_COMMAND: 'SPUBLISH' where waiters subscribe to shard channels
-- (Redis Cluster 7 and later), else 'PUBLISH'.
--
-- Record formats (all numbers are decimal integers; times are milliseconds of the Redis clock):
--   lock holder     owner -> 'expiresAt:token:exclusiveHolds:sharedHolds:clientId'
--   wait queue      owner scored by arrival, owner scored by deadline, and of the writers among
--                   them, owner scored by arrival (three sorted sets)
--   hand-off        'wokenAt:owner': the queued owner last woken and when (a string key)
--   leased permit   permit id -> 'expiresAt:token:clientId' (the client it was granted to, for
--                   inspection; a record of an older latchkey lacks ':clientId')
-- Every record starts with its deadline, so the renewal script treats holders and permits alike.

-- The Redis clock, read once per script run: every time a run uses is the same moment.
local clock
local function redis_time()
  if clock == nil then
    clock = redis.call('TIME')
  end
  return clock
end

local function now_millis()
  local time = redis_time()
  return tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end

local function now_micros()
  local time = redis_time()
  return tonumber(time[1]) * 1000000 + tonumber(time[2])
end

-- Numbers go to Redis through this: Lua would print large ones in exponent notation.
local function int(number)
  return string.format('%d', number)
end

-- Appends values to the end of a list (the reply array of an inspection).
local function append_all(list, values)
  for _, value in ipairs(values) do
    list[#list + 1] = value
  end
end

-- The reply of an acquire attempt, one string that the client reads without building lists:
-- 'status:token:holds:retryAfterMillis'; status 1 granted, 0 busy, 2 upgrade refused.
local function acquire_reply(status, token, holds, retry_after)
  return int(status) .. ':' .. int(token) .. ':' .. int(holds) .. ':' .. int(retry_after)
end

-- The next fencing token from a counter (a string key, or a hash field when a field is given):
-- one more than the last token, and at least the Redis clock in microseconds, so that tokens keep
-- growing when the counter is lost (a restart without persistence, a fail-over with lag) as long
-- as the clock does not go back (docs/adr/0002-redis-fencing-tokens.md). Exact in Lua's doubles
-- until the year 2255.
local function next_token(key, field)
  local now = now_micros()
  if field == nil then
    -- Usually the clock is ahead of the counter: one SET ... GET writes the token and reads the
    -- last one; a second SET corrects it in the rare other case.
    local token = math.max((tonumber(redis.call('SET', key, int(now), 'GET')) or 0) + 1, now)
    if token ~= now then
      redis.call('SET', key, int(token))
    end
    return token
  end
  local token = math.max((tonumber(redis.call('HGET', key, field)) or 0) + 1, now)
  redis.call('HSET', key, field, int(token))
  return token
end

-- A wake-up: '<slots>' or '<slots> <owner>', where slots is a count or 'all'.
local function publish(channel, slots, owner)
  if owner == nil then
    redis.call(PUBLISH_COMMAND, channel, slots)
  else
    redis.call(PUBLISH_COMMAND, channel, slots .. ' ' .. owner)
  end
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

-- The wait queue of a lock is three sorted sets: the queue, every waiting owner scored by arrival
-- (its order); the deadlines, the same owners scored by the deadline of each place; and the
-- writers, the owners among them that wait for the exclusive mode, scored by the same arrival
-- numbers. The deadlines make dropping dead waiters cheap; the arrival numbers (the Redis clock in
-- microseconds when the owner entered) only grow while the clock does not go back, so a waiter
-- that renews its place keeps it. The writers answer "is a writer queued
-- ahead of this reader?" with one command (docs/adr/0006-read-write-locks-prefer-writers.md).

-- Deletes the places past their deadline; returns how many there were.
local function purge_queue(queue, deadlines, writers, now)
  local expired = redis.call('ZRANGEBYSCORE', deadlines, '-inf', int(now))
  if #expired > 0 then
    -- In slices: unpack() of a very long list would overflow Lua's stack.
    for first = 1, #expired, 1000 do
      local last = math.min(first + 999, #expired)
      redis.call('ZREM', queue, unpack(expired, first, last))
      redis.call('ZREM', writers, unpack(expired, first, last))
    end
    redis.call('ZREMRANGEBYSCORE', deadlines, '-inf', int(now))
  end
  return #expired
end

-- The owner that arrived first, or nil for an empty queue (purge it first).
local function queue_head(queue)
  return redis.call('ZRANGE', queue, 0, 0)[1]
end

-- The live owner that arrived first and when its place ends, or nil for an empty queue. Places
-- past their deadline are purged when the head's is (so every dead place is, by the time it would
-- be served): an empty queue (no waiters: the common case) costs one command, a live head two.
local function live_queue_head(queue, deadlines, writers, now)
  local head = queue_head(queue)
  if head == nil then
    return nil
  end
  local place_ends = tonumber(redis.call('ZSCORE', deadlines, head))
  if place_ends ~= nil and place_ends > now then
    return head, place_ends
  end
  purge_queue(queue, deadlines, writers, now)
  head = queue_head(queue)
  if head == nil then
    return nil
  end
  return head, tonumber(redis.call('ZSCORE', deadlines, head))
end

local function is_queued(queue, owner)
  return redis.call('ZSCORE', queue, owner) ~= false
end

-- Enters an owner at the tail of the queue, or keeps its live place; either way its place lasts
-- keep_alive ms from now, and it waits for the mode it asks for now. Arrival numbers are the Redis
-- clock in microseconds (one script run per microsecond at most), so a new owner goes behind every
-- owner queued before it without reading the tail; a place that ran out goes to the tail too. The
-- three sets live at least until the latest deadline: when the one this call wrote would expire
-- sooner than this place, all three get twice the keep-alive, so that a queue in use extends them
-- once per keep-alive rather than on every attempt (an abandoned queue lasts at most that long).
local function enqueue(queue, deadlines, writers, owner, exclusive, keep_alive, now)
  local arrival = int(now_micros())
  if redis.call('ZADD', queue, 'NX', arrival, owner) == 0 then
    local place_ends = tonumber(redis.call('ZSCORE', deadlines, owner))
    if place_ends ~= nil and place_ends > now then
      arrival = redis.call('ZSCORE', queue, owner)
    else
      redis.call('ZADD', queue, arrival, owner)
    end
  end
  redis.call('ZADD', deadlines, int(now + keep_alive), owner)
  local written = queue
  if exclusive then
    redis.call('ZADD', writers, arrival, owner)
    written = writers
  else
    redis.call('ZREM', writers, owner)
  end
  if redis.call('PTTL', written) < keep_alive then
    redis.call('PEXPIRE', queue, int(2 * keep_alive))
    redis.call('PEXPIRE', deadlines, int(2 * keep_alive))
    redis.call('PEXPIRE', writers, int(2 * keep_alive))
  end
end

-- Removes an owner from the queue. With check_place, returns whether it held a live place (one
-- command more); without, whether it was queued at all.
local function dequeue(queue, deadlines, writers, owner, now, check_place)
  if redis.call('ZREM', queue, owner) == 0 then
    return false
  end
  local live = true
  if check_place then
    live = (tonumber(redis.call('ZSCORE', deadlines, owner)) or 0) > now
  end
  redis.call('ZREM', deadlines, owner)
  redis.call('ZREM', writers, owner)
  return live
end

local function is_writer(writers, owner)
  return redis.call('ZSCORE', writers, owner) ~= false
end

-- Whether a live writer waits ahead of this owner: anywhere in the queue if the owner is not
-- queued, else one that arrived before it. Returns the milliseconds until that writer's place
-- ends if it stops renewing it, or -1 if no writer is ahead. No queued writer (the common case)
-- costs one command.
local function writer_ahead(queue, deadlines, writers, owner, now)
  local first = redis.call('ZRANGE', writers, 0, 0)[1]
  if first == nil then
    return -1
  end
  purge_queue(queue, deadlines, writers, now)
  local arrival = redis.call('ZSCORE', queue, owner)
  local ahead
  if arrival == false then
    ahead = redis.call('ZRANGE', writers, 0, 0)[1]
  else
    ahead = redis.call('ZRANGE', writers, '-inf', '(' .. arrival, 'BYSCORE', 'LIMIT', 0, 1)[1]
  end
  if ahead == nil then
    return -1
  end
  return tonumber(redis.call('ZSCORE', deadlines, ahead)) - now
end

local function exclusive_held(holders)
  for _, holder in pairs(holders) do
    if holder.exclusive > 0 then
      return true
    end
  end
  return false
end

-- The hand-off (io.latchkey.spi.LockRequest, docs/adr/0003-wait-queue-for-every-waiter.md): every
-- wake-up aimed at a queued owner records whom and when; an attempt of that owner ends it; while
-- it is younger than the requesting attempt's handoffMillis, the lock's next new holder is kept for
-- that owner; older, the owner has missed its turn and the next head is served.

-- Wakes a queued owner and starts its hand-off; the record lives no longer than the owner's place
-- (place_ends, read here when the caller does not know it).
local function wake(handoff, deadlines, channel, owner, now, place_ends)
  publish(channel, '1', owner)
  place_ends = place_ends or tonumber(redis.call('ZSCORE', deadlines, owner)) or now + 1
  redis.call('SET', handoff, int(now) .. ':' .. owner, 'PX', int(math.max(place_ends - now, 1)))
end

-- The pending hand-off: the woken owner and when it was woken, or nil.
local function read_handoff(handoff)
  local record = redis.call('GET', handoff)
  if record == false then
    return nil, 0
  end
  local woken_at, owner = string.match(record, '^(%d+):(.*)$')
  return owner, tonumber(woken_at)
end

-- The owner a free lock is kept for and the milliseconds left of its hand-off, or nil. A woken
-- owner that missed its turn (its hand-off is handoff_ms old, or its place ran out) loses its place
-- here, and the next live head is woken in its stead (no message when that head is the requesting
-- owner: its attempt goes on). Call on a lock that no holder keeps from the requesting owner.
local function pending_handoff(handoff, queue, deadlines, writers, channel, owner, handoff_ms, now)
  local woken, woken_at = read_handoff(handoff)
  if woken == nil then
    return nil, 0
  end
  local place_ends = tonumber(redis.call('ZSCORE', deadlines, woken))
  if place_ends ~= nil and place_ends > now and now - woken_at < handoff_ms then
    return woken, woken_at + handoff_ms - now
  end
  redis.call('DEL', handoff)
  dequeue(queue, deadlines, writers, woken, now, false)
  local head, head_place_ends = live_queue_head(queue, deadlines, writers, now)
  if head == nil then
    return nil, 0
  end
  if head == owner then
    return head, handoff_ms
  end
  wake(handoff, deadlines, channel, head, now, head_place_ends)
  return head, handoff_ms
end

-- After an owner's last hold of a mode was released (exclusive: of the exclusive mode), or a holder
-- was evicted (exclusive: it held the lock exclusively): if nobody holds the lock exclusively any
-- more, and after a shared hold nobody at all, the head of the wait queue may enter. Wakes it, and
-- only it; with an empty queue nobody waits.
-- If the head is the owner given as candidate (a waiter that the releasing client hands the lock
-- over to in the same script), or nobody is queued and a candidate is given, nobody is woken and
-- true is returned, with whether the candidate was queued: the caller attempts for it.
local function wake_queue_head(queue, deadlines, writers, channel, handoff, holders, exclusive, now,
                               candidate)
  if exclusive_held(holders) or (not exclusive and next(holders) ~= nil) then
    return false
  end
  local head, place_ends = live_queue_head(queue, deadlines, writers, now)
  if head == nil then
    return candidate ~= nil, false
  end
  if head == candidate then
    return true, true
  end
  wake(handoff, deadlines, channel, head, now, place_ends)
  return false
end

-- Removes one hold of an owner's grant in a mode (io.latchkey.spi.LockStore#release) from the
-- holders read by read_holders. Returns the holds left in that mode, or -1 if the owner held none
-- under that grant (token 0: under any grant); a record with another token is a later grant to the
-- same owner and is left alone.
local function release_hold(key, holders, owner, exclusive, token, now)
  local me = holders[owner]
  if me == nil or (token ~= 0 and me.token ~= token) then
    return -1
  end
  local mode = exclusive and 'exclusive' or 'shared'
  if me[mode] == 0 then
    return -1
  end
  me[mode] = me[mode] - 1
  local remaining = me[mode]
  if me.exclusive == 0 and me.shared == 0 then
    holders[owner] = nil
    redis.call('HDEL', key, owner)
    expire_at(key, latest_expiry(holders), now)
  else
    write_holder(key, owner, me)
  end
  return remaining
end

-- One acquire attempt on a lock (the grant and queue rules of io.latchkey.spi.LockRequest), on the
-- holders read by read_holders. k: the lock's keys (holders, fence, queue, deadlines, writers,
-- channel, handoff); r: the request (owner, exclusive, lease_ms, fair, keep_alive, client,
-- handoff_ms). came: the owner's wake-up was settled by the caller (a hand-over), so the hand-off
-- record is not read. Returns acquire_reply(status, token, holds, retryAfterMillis).
local function acquire_lock(k, r, holders, now, came)
  local owner = r.owner
  local exclusive = r.exclusive
  local me = holders[owner]

  if exclusive and me ~= nil and me.exclusive == 0 and me.shared > 0 then
    return acquire_reply(2, 0, 0, -1)
  end

  local blocked = false
  local obstacle_ends = -1
  for id, holder in pairs(holders) do
    if id ~= owner and (exclusive or holder.exclusive > 0) then
      blocked = true
      obstacle_ends = math.max(obstacle_ends, holder.expires - now)
    end
  end

  local behind_others = false
  -- The owner last woken came: its hand-off is over, granted or not.
  local woken = nil
  if not came then
    woken = read_handoff(k.handoff)
  end
  if woken == owner then
    redis.call('DEL', k.handoff)
  elseif woken ~= nil and me == nil and not blocked then
    -- A free lock is kept for a woken owner until its hand-off runs out; then it is served next.
    local kept_for, kept_ms = pending_handoff(k.handoff, k.queue, k.deadlines, k.writers,
      k.channel, owner, r.handoff_ms, now)
    if kept_for == owner then
      redis.call('DEL', k.handoff)
    elseif kept_for ~= nil and (exclusive or is_writer(k.writers, kept_for)) then
      behind_others = true
      obstacle_ends = kept_ms
    end
  end
  -- Whether the queue may hold this owner; a fair first attempt sees that it is empty.
  local may_be_queued = true
  if r.fair and me == nil and not blocked then
    local head = live_queue_head(k.queue, k.deadlines, k.writers, now)
    behind_others = head ~= nil and head ~= owner
    may_be_queued = head ~= nil
  end
  if not exclusive and me == nil and not blocked then
    -- Writers are preferred (docs/adr/0006-read-write-locks-prefer-writers.md): a new reader waits
    -- behind a queued writer, until that writer's place ends if it stops renewing it.
    local writer_place_ends = writer_ahead(k.queue, k.deadlines, k.writers, owner, now)
    if writer_place_ends >= 0 then
      behind_others = true
      obstacle_ends = writer_place_ends
    end
  end

  if blocked or behind_others then
    if r.keep_alive > 0 then
      -- A waiter already queued keeps its place; only its deadline moves.
      enqueue(k.queue, k.deadlines, k.writers, owner, exclusive, r.keep_alive, now)
    end
    return acquire_reply(0, 0, 0, obstacle_ends)
  end

  local was_queued = may_be_queued
    and dequeue(k.queue, k.deadlines, k.writers, owner, now, not exclusive)
  if me == nil then
    me = { expires = 0, token = next_token(k.fence), exclusive = 0, shared = 0, client = r.client }
    holders[owner] = me
  end
  local holds
  if exclusive then
    me.exclusive = me.exclusive + 1
    holds = me.exclusive
  else
    me.shared = me.shared + 1
    holds = me.shared
  end
  -- A re-entry never shortens the lease.
  me.expires = math.max(me.expires, now + r.lease_ms)
  write_holder(k.holders, owner, me)
  expire_at(k.holders, latest_expiry(holders), now)
  if not exclusive and was_queued then
    -- A queued reader entered: the reader behind it may enter beside it (a writer may not).
    local next_waiter, place_ends = live_queue_head(k.queue, k.deadlines, k.writers, now)
    if next_waiter ~= nil and not is_writer(k.writers, next_waiter) then
      wake(k.handoff, k.deadlines, k.channel, next_waiter, now, place_ends)
    end
  end
  return acquire_reply(1, me.token, holds, -1)
end

-- The keys of a lock as the acquire and hand-over scripts receive them.
local function lock_keys()
  return { holders = KEYS[1], fence = KEYS[2], queue = KEYS[3], deadlines = KEYS[4],
           writers = KEYS[5], channel = KEYS[6], handoff = KEYS[7] }
end

-- The live permits of a leased semaphore; expired ones are deleted on the way.
local function read_permits(key, now)
  local fields = redis.call('HGETALL', key)
  local permits = { entries = {}, count = 0, earliest = nil, latest = 0 }
  for i = 1, #fields, 2 do
    local expires, token, client = string.match(fields[i + 1], '^(%d+):(%d+):?(.*)$')
    expires = tonumber(expires)
    if expires <= now then
      redis.call('HDEL', key, fields[i])
    else
      permits.entries[fields[i]] = { expires = expires, token = tonumber(token), client = client }
      permits.count = permits.count + 1
      permits.latest = math.max(permits.latest, expires)
      if permits.earliest == nil or expires < permits.earliest then
        permits.earliest = expires
      end
    end
  end
  return permits
end

local function write_permit(key, id, permit)
  redis.call('HSET', key, id, int(permit.expires) .. ':' .. int(permit.token) .. ':' .. permit.client)
end
