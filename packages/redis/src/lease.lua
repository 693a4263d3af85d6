-- Concurrency leases, as acquireLeases and MemoryLeaseStore in packages/core/src/protect/lease-table.ts: one sorted
-- set per table (the key's, and the global one), holder -> the instant (ms) its lease expires. One call per acquire,
-- renew or release, so every instance sees the same leases at one instant, on the Redis clock.
--
-- KEYS: the tables, in the order of the limits.
-- ARGV: mode ('acquire' | 'renew' | 'release'), now (ms; '' = the Redis server's TIME), lease_ms, extra ttl ms
--       (explicit now only), then for 'acquire' the holder and one limit per table, for 'renew' the holders, for
--       'release' the holder.
-- Returns for 'acquire': allowed (1 | 0), then the leases held in each table (after this one when allowed).

local mode = ARGV[1]
local now
if ARGV[2] == '' then
  if redis.replicate_commands ~= nil then redis.replicate_commands() end
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
else
  now = tonumber(ARGV[2])
end
local lease_ms = tonumber(ARGV[3])
-- Every lease in a table expires within lease_ms of its last write: so does the table.
local ttl_ms = lease_ms + tonumber(ARGV[4])

if mode == 'release' then
  for i = 1, #KEYS do redis.call('ZREM', KEYS[i], ARGV[5]) end
  return 0
end

if mode == 'renew' then
  for i = 1, #KEYS do
    for h = 5, #ARGV do redis.call('ZADD', KEYS[i], 'XX', now + lease_ms, ARGV[h]) end
    if redis.call('EXISTS', KEYS[i]) == 1 then redis.call('PEXPIRE', KEYS[i], ttl_ms) end
  end
  return 0
end

local holder = ARGV[5]
local reply = { 1 }
for i = 1, #KEYS do
  local limit = tonumber(ARGV[5 + i])
  local size = redis.call('ZCARD', KEYS[i])
  -- Expired leases are dropped only when the table looks full; one that expires at exactly now has expired.
  if size >= limit then
    redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now)
    size = redis.call('ZCARD', KEYS[i])
  end
  reply[i + 1] = size
  if size >= limit then reply[1] = 0 end
end
if reply[1] == 0 then return reply end
for i = 1, #KEYS do
  redis.call('ZADD', KEYS[i], now + lease_ms, holder)
  redis.call('PEXPIRE', KEYS[i], ttl_ms)
  reply[i + 1] = reply[i + 1] + 1
end
return reply
