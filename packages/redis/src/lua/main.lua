-- The entry point, after the helpers, the algorithms this script was built for and their ALGORITHMS table (see
-- src/script.ts): runs the rules of one request at one instant, all or nothing, as evaluateRules + committed in
-- packages/core/src/store.ts, and writes every changed key with its expiry in this same call.
--
-- KEYS: one key per rule.
-- ARGV: mode ('charge' | 'peek' | 'refund'), now (ms; '' = the Redis server's TIME), extra ttl ms (explicit now
--       only), cost, then per rule: algorithm code, limit, window_ms, rate_numerator, rate_denominator.
-- Returns one array per rule: allowed (1 | 0), remaining, reset_ms, retry_after_ms (-1 = never), delay_ms. Redis
-- would truncate a fraction in a reply, so every number returned is a whole one.
-- A stored value is when the state becomes a new key's state, then the state, as each algorithm's encode writes it.

local mode = ARGV[1]
local now
if ARGV[2] == '' then
  -- Redis 3.2 to 4 replicate a script that reads TIME only by its effects; 5 and later always do.
  if redis.replicate_commands ~= nil then redis.replicate_commands() end
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
else
  now = tonumber(ARGV[2])
end
local extra_ttl_ms = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])

-- As MemoryStore: a state past its expiry is a new key's state (the real TTL may lag by up to extra_ttl_ms). A value
-- this algorithm cannot decode (too short for its doubles: something else wrote the key) is no state either, so the
-- key starts afresh instead of failing the script, and with it every request on that key, until the key expires.
local function read(key, algorithm)
  local value = redis.call('GET', key)
  if not value then return nil end
  local decoded, expires_at, state = pcall(algorithm.decode, value)
  if not decoded or expires_at <= now then return nil end
  return state
end

local function write(key, algorithm, state, reset_ms)
  if state == nil or reset_ms <= 0 then
    redis.call('DEL', key)
    return
  end
  local value = algorithm.encode(now + reset_ms, state)
  -- Redis sends a number argument with all its digits from 7.0, with 14 significant digits before: a whole number
  -- below 10^14 ms (3 000 years) goes as it is, which spares a string.format on every write.
  local ttl_ms = reset_ms + extra_ttl_ms
  if ttl_ms >= 1e14 then ttl_ms = string.format('%.0f', ttl_ms) end
  redis.call('SET', key, value, 'PX', ttl_ms)
end

-- Per rule: its parameters as the algorithms read them (p), its algorithm, its key's state and then its step.
local rules = {}
for i = 1, #KEYS do
  local at = 4 + (i - 1) * 5
  local algorithm = ALGORITHMS[ARGV[at + 1]]
  rules[i] = {
    algorithm = algorithm,
    limit = tonumber(ARGV[at + 2]),
    window_ms = tonumber(ARGV[at + 3]),
    rate_numerator = tonumber(ARGV[at + 4]),
    rate_denominator = tonumber(ARGV[at + 5]),
    state = read(KEYS[i], algorithm),
    step = nil,
  }
end

if mode == 'refund' then
  -- As MemoryStore.refund: each key on its own; a key with nothing left is not written.
  for i = 1, #KEYS do
    local rule = rules[i]
    if rule.state == nil then
      rule.step = rule.algorithm.step(nil, now, 1, rule, false)
    else
      rule.step = rule.algorithm.refund(rule.state, now, cost, rule)
      write(KEYS[i], rule.algorithm, rule.step.state, rule.step.reset_ms)
    end
  end
else
  local charge = mode == 'charge'
  local rejected = false
  for i = 1, #KEYS do
    local rule = rules[i]
    rule.step = rule.algorithm.step(rule.state, now, cost, rule, charge)
    if not rule.step.allowed then rejected = true end
  end
  if rejected and charge then
    -- Nothing is charged, so the rules that would have admitted report their uncharged view.
    for i = 1, #KEYS do
      local rule = rules[i]
      if rule.step.allowed then rule.step = rule.algorithm.step(rule.state, now, cost, rule, false) end
    end
  end
  -- Every new state is written: each rule's when all charged, else only those moved back to a clock that stepped back.
  for i = 1, #KEYS do
    local rule = rules[i]
    if rule.step.state ~= rule.state then write(KEYS[i], rule.algorithm, rule.step.state, rule.step.reset_ms) end
  end
end

local reply = {}
for i = 1, #KEYS do
  local step = rules[i].step
  local allowed, retry_after_ms = 0, step.retry_after_ms
  if step.allowed then allowed = 1 end
  if retry_after_ms == INFINITY then retry_after_ms = -1 end
  reply[i] = { allowed, step.remaining, step.reset_ms, retry_after_ms, step.delay_ms }
end
return reply
