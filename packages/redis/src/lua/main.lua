-- The entry point, after the helpers, the algorithms this script was built for and their ALGORITHMS table (see
-- src/script.ts): runs the rules of one request at one instant, all or nothing, as evaluateRules + committed in
-- packages/core/src/store.ts, and writes every changed key with its expiry in this same call.
--
-- KEYS: one key per rule, then the block key of each rule with a block (block_ms > 0), in the order of the rules.
-- ARGV: mode ('charge' | 'peek' | 'refund'), now (ms; '' = the Redis server's TIME), extra ttl ms (explicit now
--       only), cost, then per rule: algorithm code, limit, window_ms, rate_numerator, rate_denominator, block_ms,
--       and as many period boundaries as its algorithm takes (a calendar window: 4, around the instance's clock).
-- Returns one array per rule: allowed (1 | 0), remaining, reset_ms, retry_after_ms (-1 = never), delay_ms. Redis
-- would truncate a fraction in a reply, so every number returned is a whole one. When the time is outside the
-- boundaries of a calendar rule (the clocks disagree by more than a period), nothing is read or written and the
-- reply is the error 'SLUICE_CLOCK <now>': the instance asks again with boundaries around that time.
-- A key this script cannot use (something else wrote it, a rule's key or its block key) fails the call with the error
-- `SLUICEKEY <rule number> <what it holds>`, before anything is written: that request fails alone, and the key is
-- left as it was found.
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

-- Whether a decoded value is a state this script wrote: every number in it a whole one from 0 to 2^53, as all states
-- are, and the value exactly as long as those numbers (a longer or shorter one is something else).
local function whole(n)
  return type(n) == 'number' and n >= 0 and n <= 9007199254740992 and n == math.floor(n)
end

local function well_formed(value, expires_at, state)
  if not whole(expires_at) then return false end
  local numbers = 1
  for _, field in pairs(state) do
    if type(field) == 'table' then
      for i = 1, #field do
        if not whole(field[i]) then return false end
      end
      numbers = numbers + #field
    elseif whole(field) then
      numbers = numbers + 1
    else
      return false
    end
  end
  return #value == 8 * numbers
end

-- The key's state, as MemoryStore keeps it: a state past its expiry is a new key's state (the real TTL may lag by up
-- to extra_ttl_ms). Second result: what the key holds instead, when it is no state of this algorithm.
local function read(key, algorithm)
  local value = redis.pcall('GET', key)
  if type(value) == 'table' and value.err then return nil, 'holds a ' .. redis.call('TYPE', key).ok end
  if not value then return nil end
  local decoded, expires_at, state = pcall(algorithm.decode, value)
  if not decoded or not well_formed(value, expires_at, state) then
    return nil, 'holds ' .. #value .. ' bytes that are no state of this algorithm'
  end
  if expires_at <= now then
    -- Gone for good, as when Redis expires it (the replay clock's keys outlive their expiry): a clock that then
    -- stepped back must not bring the state back.
    redis.call('DEL', key)
    return nil
  end
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

-- Per rule: its parameters as the algorithms read them (p), its algorithm, its key's state, when its key's block
-- ends (a rule with a block), and then its step.
local rules = {}
local at = 4
while at < #ARGV do
  local algorithm = ALGORITHMS[ARGV[at + 1]]
  local rule = {
    algorithm = algorithm,
    limit = tonumber(ARGV[at + 2]),
    window_ms = tonumber(ARGV[at + 3]),
    rate_numerator = tonumber(ARGV[at + 4]),
    rate_denominator = tonumber(ARGV[at + 5]),
    block_ms = tonumber(ARGV[at + 6]),
    state = nil,
    blocked_until = nil,
    step = nil,
  }
  at = at + 6
  if algorithm.boundaries > 0 then
    rule.boundaries = {}
    for j = 1, algorithm.boundaries do rule.boundaries[j] = tonumber(ARGV[at + j]) end
    at = at + algorithm.boundaries
    if algorithm.outside(rule, now) then return redis.error_reply('SLUICE_CLOCK ' .. string.format('%.0f', now)) end
  end
  rules[#rules + 1] = rule
end
local blocks = #rules
for i = 1, #rules do
  local rule = rules[i]
  local state, unusable = read(KEYS[i], rule.algorithm)
  if unusable then return redis.error_reply('SLUICEKEY ' .. i .. ' ' .. unusable) end
  rule.state = state
  if rule.block_ms > 0 then
    blocks = blocks + 1
    rule.block_key = KEYS[blocks]
    local blocked_until = redis.pcall('GET', rule.block_key)
    if type(blocked_until) == 'table' and blocked_until.err then
      return redis.error_reply('SLUICEKEY ' .. i .. ' block key holds a ' .. redis.call('TYPE', rule.block_key).ok)
    end
    rule.blocked_until = tonumber(blocked_until)
    if rule.blocked_until ~= nil and rule.blocked_until <= now then
      redis.call('DEL', rule.block_key) -- an ended block stays ended, as a state that expired (see read)
      rule.blocked_until = nil
    end
  end
end

if mode == 'refund' then
  -- As MemoryStore.refund: each key on its own; a key with nothing left is not written.
  for i = 1, #rules do
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
  for i = 1, #rules do
    local rule = rules[i]
    local blocked = is_blocked(rule.blocked_until, now)
    rule.step = rule.algorithm.step(rule.state, now, cost, rule, charge and not blocked)
    if blocked then rule.step = blocked_step(rule.step, now, rule.blocked_until) end
    if not rule.step.allowed then rejected = true end
  end
  if rejected and charge then
    -- Nothing is charged, so the rules that would have admitted report their uncharged view; each rule that
    -- rejected and has a block starts one, unless its key was blocked already (a block is never extended).
    for i = 1, #rules do
      local rule = rules[i]
      if rule.step.allowed then
        rule.step = rule.algorithm.step(rule.state, now, cost, rule, false)
      elseif rule.block_ms > 0 and not is_blocked(rule.blocked_until, now) then
        local blocked_until = now + rule.block_ms
        redis.call('SET', rule.block_key, string.format('%.0f', blocked_until), 'PX', rule.block_ms + extra_ttl_ms)
        rule.step = blocked_step(rule.step, now, blocked_until)
      end
    end
  end
  -- Every new state is written: each rule's when all charged, else only those moved back to a clock that stepped back.
  for i = 1, #rules do
    local rule = rules[i]
    if rule.step.state ~= rule.state then write(KEYS[i], rule.algorithm, rule.step.state, rule.step.reset_ms) end
  end
end

local reply = {}
for i = 1, #rules do
  local step = rules[i].step
  local allowed, retry_after_ms = 0, step.retry_after_ms
  if step.allowed then allowed = 1 end
  if retry_after_ms == INFINITY then retry_after_ms = -1 end
  reply[i] = { allowed, step.remaining, step.reset_ms, retry_after_ms, step.delay_ms }
end
return reply
