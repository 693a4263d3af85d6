-- The entry point, after the helpers and the six algorithms above it in the same script: runs the rules of one
-- request at one instant, all or nothing, as evaluateRules + committed in packages/core/src/store.ts, and writes
-- every changed key with its expiry in this same call.
--
-- KEYS: one key per rule.
-- ARGV: mode ('charge' | 'peek' | 'refund'), now (ms; '' = the Redis server's TIME), extra ttl ms (explicit now
--       only), cost, then per rule: algorithm code, limit, window_ms, rate_numerator, rate_denominator.
-- Returns per rule: allowed (1 | 0), remaining, reset_ms, retry_after_ms (-1 = never), delay_ms. Redis would
-- truncate a fraction in a reply, so every number returned is a whole one.
-- A stored value is 'expires_at field field ...' in integers: the state, and when it becomes a new key's state.

local ALGORITHMS = {
  fw = { step = fixed_window, refund = fixed_window_refund, codec = fixed_window_codec },
  sl = { step = sliding_log, refund = sliding_log_refund, codec = sliding_log_codec },
  sw = { step = sliding_window, refund = sliding_window_refund, codec = sliding_window_codec },
  tb = { step = token_bucket, refund = token_bucket_refund, codec = token_bucket_codec },
  lb = { step = leaky_bucket, refund = leaky_bucket_refund, codec = leaky_bucket_codec },
  lq = { step = leaky_queue, refund = leaky_queue_refund, codec = leaky_queue_codec },
}

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

local function read(key, algorithm)
  local value = redis.call('GET', key)
  if not value then return nil end
  local fields = {}
  for field in string.gmatch(value, '%S+') do fields[#fields + 1] = tonumber(field) end
  -- As MemoryStore: a state past its expiry is a new key's state (the real TTL may lag by up to extra_ttl_ms).
  if fields[1] <= now then return nil end
  table.remove(fields, 1)
  return algorithm.codec.decode(fields)
end

local function write(key, algorithm, state, reset_ms)
  if state == nil or reset_ms <= 0 then
    redis.call('DEL', key)
    return
  end
  -- '%.0f' writes every digit of an integer; tostring would round to 14 significant digits.
  local parts = { string.format('%.0f', now + reset_ms) }
  for _, n in ipairs(algorithm.codec.encode(state)) do parts[#parts + 1] = string.format('%.0f', n) end
  redis.call('SET', key, table.concat(parts, ' '), 'PX', string.format('%.0f', reset_ms + extra_ttl_ms))
end

local rules = {}
local states = {}
for i = 1, #KEYS do
  local at = 4 + (i - 1) * 5
  local algorithm = ALGORITHMS[ARGV[at + 1]]
  rules[i] = {
    algorithm = algorithm,
    limit = tonumber(ARGV[at + 2]),
    window_ms = tonumber(ARGV[at + 3]),
    rate_numerator = tonumber(ARGV[at + 4]),
    rate_denominator = tonumber(ARGV[at + 5]),
  }
  states[i] = read(KEYS[i], algorithm)
end

local steps = {}
if mode == 'refund' then
  -- As MemoryStore.refund: each key on its own; a key with nothing left is not written.
  for i = 1, #KEYS do
    local rule = rules[i]
    if states[i] == nil then
      steps[i] = rule.algorithm.step(nil, now, 1, rule, false)
    else
      steps[i] = rule.algorithm.refund(states[i], now, cost, rule)
      write(KEYS[i], rule.algorithm, steps[i].state, steps[i].reset_ms)
    end
  end
else
  local charge = mode == 'charge'
  local rejected = false
  for i = 1, #KEYS do
    local rule = rules[i]
    steps[i] = rule.algorithm.step(states[i], now, cost, rule, charge)
    if not steps[i].allowed then rejected = true end
  end
  if rejected and charge then
    -- Nothing is charged, so the rules that would have admitted report their uncharged view.
    for i = 1, #KEYS do
      if steps[i].allowed then steps[i] = rules[i].algorithm.step(states[i], now, cost, rules[i], false) end
    end
  elseif charge then
    for i = 1, #KEYS do write(KEYS[i], rules[i].algorithm, steps[i].state, steps[i].reset_ms) end
  end
end

local reply = {}
for i = 1, #KEYS do
  local step = steps[i]
  local allowed = 0
  if step.allowed then allowed = 1 end
  local retry_after_ms = step.retry_after_ms
  if retry_after_ms == INFINITY then retry_after_ms = -1 end
  reply[#reply + 1] = allowed
  reply[#reply + 1] = step.remaining
  reply[#reply + 1] = step.reset_ms
  reply[#reply + 1] = retry_after_ms
  reply[#reply + 1] = step.delay_ms
end
return reply
