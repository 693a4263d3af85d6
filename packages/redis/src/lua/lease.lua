-- Concurrency leases, as acquireLeases and renewLeases in packages/core/src/protect/lease-table.ts: one sorted set per
-- table (the key's, and the global one), holder -> the instant (ms) its lease expires. One call per acquire, renew or
-- release, so every instance sees the same leases at one instant, on the Redis clock.
--
-- KEYS: the tables, in the order of the limits.
-- ARGV: mode ('acquire' | 'renew' | 'release'), now (ms; '' = the Redis server's TIME), lease_ms, extra ttl ms
--       (explicit now only), then for 'acquire' the holder and one limit per table, for 'renew' the holders, for
--       'release' the holder.
-- Returns for 'acquire': allowed (1 | 0), then the leases held in each table (after this one when allowed); for
-- 'renew': how many of the holders' leases were missing (Redis lost them) and were taken again.
-- Errors: 'SLUICEKEY <table number> holds a <type>': a table's key holds something else (another program wrote it).
-- That call fails alone, before this script has written anything.

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

-- The leases in each table, or the error of a table whose key is no sorted set.
local sizes = {}
for i = 1, #KEYS do
  local size = redis.pcall('ZCARD', KEYS[i])
  if type(size) == 'table' and size.err then
    return redis.error_reply('SLUICEKEY ' .. i .. ' holds a ' .. redis.call('TYPE', KEYS[i]).ok)
  end
  sizes[i] = size
end

if mode == 'release' then
  for i = 1, #KEYS do redis.call('ZREM', KEYS[i], ARGV[5]) end
  return 0
end

-- A holder renews only the leases it still holds, so a lease that is missing was lost by Redis (a restart, a flush, a
-- failover, an eviction): it is taken again even in a full table. The request runs anyway, and counted, it keeps
-- the table from admitting anyone else until the leases held are back below the limit.
if mode == 'renew' then
  local retaken = 0
  for i = 1, #KEYS do
    for h = 5, #ARGV do retaken = retaken + redis.call('ZADD', KEYS[i], now + lease_ms, ARGV[h]) end
    redis.call('PEXPIRE', KEYS[i], ttl_ms)
  end
  return retaken
end

local holder = ARGV[5]
local reply = { 1 }
for i = 1, #KEYS do
  local limit = tonumber(ARGV[5 + i])
  local size = sizes[i]
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
