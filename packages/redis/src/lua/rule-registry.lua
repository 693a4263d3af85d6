-- The rules that count in one key space, as rule-registry.ts registers them: one hash per key space, fingerprint ->
-- the instant (ms, Redis clock) until which the store that wrote it is taken to be there. Never on a decision's path:
-- one call per key space when a store first binds it, then one per refresh.
--
-- KEYS[1]: the key space's registry.
-- ARGV[1]: how long this store's entries last, in ms (a few of its refresh periods); ARGV[2..]: its fingerprints here.
-- Returns the fingerprints of the other stores still there; entries that lapsed go.

if redis.replicate_commands ~= nil then redis.replicate_commands() end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local lasts_ms = tonumber(ARGV[1])

local mine = {}
for i = 2, #ARGV do mine[ARGV[i]] = true end

local others = {}
local entries = redis.call('HGETALL', KEYS[1])
for i = 1, #entries, 2 do
  local fingerprint, until_ms = entries[i], tonumber(entries[i + 1])
  if until_ms == nil or until_ms <= now then
    redis.call('HDEL', KEYS[1], fingerprint)
  elseif not mine[fingerprint] then
    others[#others + 1] = fingerprint
  end
end

-- '%.0f': every digit of a time in ms (tostring keeps 14 significant digits only).
local until_text = string.format('%.0f', now + lasts_ms)
for i = 2, #ARGV do redis.call('HSET', KEYS[1], ARGV[i], until_text) end
-- The registry lives as long as its longest-lived entry: another store may refresh less often than this one.
if redis.call('PTTL', KEYS[1]) < lasts_ms then redis.call('PEXPIRE', KEYS[1], lasts_ms) end
return others
