-- The entry point, after the helpers, the algorithms this script was built for and their ALGORITHMS table (see
-- src/script.ts): decides a batch of requests, in the order they arrived, each at one instant and all or nothing
-- across its own rules, as evaluateRules + committed in packages/core/src/store.ts; every changed key is written with
-- its expiry in this same call. A batch is the requests of one turn of the instance's event loop (src/batch.ts).
--
-- ARGV: extra ttl ms (an explicit now only, else 0), not after (the latest Redis time, in ms, this call may run at;
--       '' = any), the number of rule sets, then each rule set: its rule count,
--       then per rule: algorithm code, limit, window_ms, rate_numerator, rate_denominator, block_ms, and as many
--       period boundaries as its algorithm takes (a calendar window: 4, around the instance's clock);
--       then the requests, as runs of consecutive ones that share rule set, mode, cost and instant: per run, how
--       many requests, their rule set (from 1), mode ('charge' | 'peek' | 'refund'), cost, now (ms; '' = the Redis
--       server's TIME). A burst of one route is most often one run: each argument costs Redis about 750 instructions
--       to take in (the four of a request were 6% of a fixed-window decision's), and this instance its bytes to send.
-- KEYS: per request, in order: one key per rule of its set, then the block key of each rule with a block.
-- Returns, per request in order, five numbers per rule: allowed (1 | 0), remaining, reset_ms, retry_after_ms (-1 =
-- never), and delay_ms for a rule that admits or the rest of its key's block (0: none) for one that refuses (a refusal
-- has no delay; the block tells the instance's short-circuit how long the refusal holds: never past the moment the
-- rule's state expires, which only a call that reads it can see); that number as -1 - it when the key's time is ahead
-- of the clock (see key-time.lua: its numbers then jump when the clock catches up, so the short-circuit must not count
-- them down). Redis would truncate a fraction, so every number is a whole one.
-- Or one string when that request failed alone (a flat array: a nested array per request costs Redis more than the
-- numbers in it):
-- - 'SLUICE_CLOCK <now>': the time is outside the boundaries of a calendar rule (the clocks disagree by more than a
--   period); nothing is read or written, and the instance asks again with boundaries around that time.
-- - 'SLUICEKEY <rule number> <what it holds>': a key this script cannot use (something else wrote it, a rule's key or
--   its block key), found before anything is written: the key is left as it was found.
-- - any other error a request met, as its message; the requests after it are still decided.
-- And last, the Redis time the call ran at (the instance's view of the Redis clock, for the deadlines of its next
-- calls). Or, when Redis runs the call after its deadline (the instance gave up on it, and a client sent it again, or
-- Redis read it late), the error 'SLUICELATE <Redis time>' for the whole call: nothing is read or written.
-- A stored value is when its key expires, then the state, as each algorithm's encode writes it: the instant the state
-- becomes a new key's state, or for an algorithm whose key outlives its state, a later one (see `write`).

-- A number argument is read as `ARGV[i] + 0`: Lua converts the string as tonumber does, without calling a C function
-- (about 1 000 instructions of Redis less each, see math.lua); every such argument is always a number.
local extra_ttl_ms = ARGV[1] + 0
-- Redis's clock, read once per batch: every request of a batch that takes Redis's time is decided at that instant, and
-- every key expires by it. Redis 3.2 to 4 replicate a script that reads TIME only by its effects unless told to; 5
-- and later always do (REDIS_VERSION_NUM is there from 7.0, where the call is a no-op).
if redis.REDIS_VERSION_NUM == nil and redis.replicate_commands ~= nil then redis.replicate_commands() end
local time = redis.call('TIME')
local micros = time[2] + 0
local redis_now = time[1] * 1000 + (micros - micros % 1000) / 1000
if ARGV[2] ~= '' and redis_now > ARGV[2] + 0 then
  return redis.error_reply('SLUICELATE ' .. string.format('%.0f', redis_now))
end
-- The instant of the request being decided.
local now

-- When a key whose state matters for `ms` more is to expire, by Redis's clock. An absolute time (PXAT, PEXPIREAT) rather than PX or PEXPIRE:
-- Redis rewrites a relative expiry into an absolute one for its replicas and AOF, which costs it more than the write
-- itself. Redis sends a number argument with all its digits from 7.0, with 14 significant digits before: a whole
-- number below 10^14 ms (3 000 years from 1970) goes as it is.
local function expire_at(ms)
  local at = redis_now + ms + extra_ttl_ms
  if at >= 1e14 then return string.format('%.0f', at) end
  return at
end

-- Whether SET takes PXAT (Redis 6.2 and later; REDIS_VERSION_NUM is there from 7.0): a value and its absolute expiry
-- then go in one command instead of two, and an absolute expiry is not rewritten either.
local set_takes_pxat = redis.REDIS_VERSION_NUM ~= nil

-- Writes `value` to expire `ms` from now by Redis's clock.
local function set_expiring(key, value, ms)
  if set_takes_pxat then
    redis.call('SET', key, value, 'PXAT', expire_at(ms))
  else
    redis.call('SET', key, value)
    redis.call('PEXPIREAT', key, expire_at(ms))
  end
end

-- The key's state under rule `p`, as MemoryStore keeps it: a state past its expiry is a new key's state (the real TTL
-- may lag by up to extra_ttl_ms). Second result: what the key holds instead, when it is no state of this algorithm;
-- third: when the key expires, as its value says; fourth: how long its value is; fifth: when the state read expires.
local function read(key, p)
  local algorithm = p.algorithm
  if algorithm.read ~= nil then
    -- An algorithm that reads its key itself (the sliding log, a view on a long value) says when its state expires.
    local state, unusable = algorithm.read(key)
    if state ~= nil and state.expires_at <= now then
      redis.call('DEL', key) -- gone for good, as below
      return nil
    end
    return state, unusable
  end
  local value = redis.pcall('GET', key)
  if not value then return nil end
  -- An error reply (a key of another type) is a table with err; a string finds its library's field of that name, none
  -- (a check without a call of type(), which costs Redis about 800 instructions, and every decision reads a key).
  if value.err ~= nil then return nil, 'holds a ' .. redis.call('TYPE', key).ok end
  -- A value this script wrote is exactly as long as its numbers, and every number in it is a whole one (see `whole`):
  -- each algorithm's decode checks both (`whole_doubles`), and answers nil for anything else (something else wrote it).
  local key_expires_at, state = algorithm.decode(value)
  if key_expires_at == nil then return nil, 'holds ' .. #value .. ' bytes that are no state of this algorithm' end
  -- A key that outlives its state (see `write`) holds the instant its algorithm keeps such keys until, and the
  -- algorithm works out from that and the state when the state expires itself; any other holds when its state expires.
  local expires_at = key_expires_at
  if algorithm.expires_at ~= nil then expires_at = algorithm.expires_at(state, p, key_expires_at) end
  if expires_at <= now then
    -- Gone for good, as when Redis expires it (the replay clock's keys outlive their expiry): a clock that then
    -- stepped back must not bring the state back.
    redis.call('DEL', key)
    return nil
  end
  return state, nil, key_expires_at, #value, expires_at
end

-- Writes a step's new state (see step_of), to expire when the key is back to its full allowance (reset_ms from now),
-- and while the key's time is ahead of the clock (it stepped back, see key-time.lua) that much later, as MemoryStore
-- keeps it. A state whose key expires when the one read did (a fixed window within its window) and is as long is
-- written over the old one in place, which keeps the key's expiry: setting an expiry costs Redis more than twice the
-- write itself.
-- An algorithm whose state expires later with each charge (the sliding window) keeps its key until an instant that
-- all the states of a window share (`key_expires_at`), later than the state's own expiry, which `read` then works out
-- from the state (`expires_at`); the key outlives its state by less than a window. Not for a blocked rule's step,
-- kept until the block ends (a write only when the clock stepped back): its value holds that instant, as any other.
-- (Should that instant be the window's `key_expires_at` to the millisecond, the state is read as expiring on its own,
-- earlier: faded by then, it decides as a new key's state would, unless the clock steps back again.)
local function write(key, p, state, reset_ms, ahead_ms, blocked, read_key_expires_at, read_length)
  local algorithm = p.algorithm
  if state == nil or reset_ms <= 0 then
    redis.call('DEL', key)
    return
  end
  local keep_ms = reset_ms + ahead_ms
  if algorithm.write ~= nil then
    algorithm.write(key, state, now + keep_ms, expire_at(keep_ms))
    return
  end
  local key_expires_at = now + keep_ms
  if algorithm.key_expires_at ~= nil and not blocked then
    key_expires_at = algorithm.key_expires_at(state, p)
    keep_ms = key_expires_at - now
  end
  local value = algorithm.encode(key_expires_at, state)
  if key_expires_at == read_key_expires_at and #value == read_length then
    -- The offset as text: Redis turns a number argument into text with snprintf, a fifth of the write's cost.
    redis.call('SETRANGE', key, '0', value)
    return
  end
  set_expiring(key, value, keep_ms)
end

-- The rule sets: per rule, its parameters as the algorithms read them (p) and its algorithm; how many keys a request
-- of that set sends (a key per rule, and a block key per rule with a block); and whether that is one key, a single
-- rule without a block, which takes decide_one.
local sets = {}
local at = 3
for s = 1, ARGV[3] + 0 do
  local rules = {}
  local count = ARGV[at + 1] + 0
  local keys = count
  at = at + 1
  for i = 1, count do
    local algorithm = ALGORITHMS[ARGV[at + 1]]
    local p = {
      algorithm = algorithm,
      limit = ARGV[at + 2] + 0,
      window_ms = ARGV[at + 3] + 0,
      rate_numerator = ARGV[at + 4] + 0,
      rate_denominator = ARGV[at + 5] + 0,
      block_ms = ARGV[at + 6] + 0,
    }
    at = at + 6
    if algorithm.boundaries > 0 then
      p.boundaries = {}
      for j = 1, algorithm.boundaries do p.boundaries[j] = ARGV[at + j] + 0 end
      at = at + algorithm.boundaries
    end
    rules[i] = p
    if p.block_ms > 0 then keys = keys + 1 end
  end
  rules.keys = keys
  rules.single = keys == 1
  sets[s] = rules
end

-- The reply, and how many numbers it holds so far. It starts with room for one request's five numbers and the time, so
-- that a lone request's reply never grows (Lua 5.1 rehashes a table each time its array part doubles); what is left of
-- that room is taken out at the end.
local replies = { 0, 0, 0, 0, 0, 0 }
local n = 0

-- An algorithm's step (and its refund) answers as core's Step does, in seven values: the state to keep (the one it was
-- given when nothing changed: then nothing is written), whether it admits, remaining, reset_ms, retry_after_ms
-- (INFINITY: never), delay_ms, and how far the key's time is ahead of the clock (ahead_ms, see key-time.lua). Values
-- rather than a table, since a table costs Redis about 2 000 instructions and every decision takes a step; decide,
-- which holds a step per rule, keeps each as a table (and a blocked rule's with block_left_ms, see blocks.lua).
local function step_of(state, allowed, remaining, reset_ms, retry_after_ms, delay_ms, ahead_ms)
  return { state = state, allowed = allowed, remaining = remaining, reset_ms = reset_ms,
    retry_after_ms = retry_after_ms, delay_ms = delay_ms, ahead_ms = ahead_ms }
end

-- Appends a rule's step (see step_of) to the reply, with the rest of its key's block when it is blocked.
local function append(allowed, remaining, reset_ms, retry_after_ms, delay_ms, ahead_ms, block_left_ms)
  local admitted, last = 0, block_left_ms or 0
  if allowed then admitted, last = 1, delay_ms end
  if retry_after_ms == INFINITY then retry_after_ms = -1 end
  if ahead_ms > 0 then last = -1 - last end
  replies[n + 1] = admitted
  replies[n + 2] = remaining
  replies[n + 3] = reset_ms
  replies[n + 4] = retry_after_ms
  replies[n + 5] = last
  n = n + 5
end

-- Appends a step held as a table (see step_of) to the reply.
local function append_step(step)
  append(step.allowed, step.remaining, step.reset_ms, step.retry_after_ms, step.delay_ms, step.ahead_ms,
    step.block_left_ms)
end

-- The clock check of a calendar rule (see 'SLUICE_CLOCK' above).
local function check_clock(p)
  if p.boundaries ~= nil and p.algorithm.outside(p, now) then error('SLUICE_CLOCK ' .. string.format('%.0f', now), 0) end
end

-- A request of a single rule without a block, the common case: what decide does for it, without decide's per-rule
-- tables and loops (with one rule, the rule that rejects is the only one, and there is no block to read or start).
local function decide_one(p, key, mode, cost)
  local algorithm = p.algorithm
  if p.boundaries ~= nil then check_clock(p) end
  local read_state, unusable, key_expires_at, length = read(key, p)
  if unusable then error('SLUICEKEY 1 ' .. unusable, 0) end
  local state, allowed, remaining, reset_ms, retry_after_ms, delay_ms, ahead_ms
  if mode == 'refund' then
    -- As MemoryStore.refund: a key with nothing left is not written.
    if read_state == nil then return append(algorithm.step(nil, now, 1, p, false)) end
    state, allowed, remaining, reset_ms, retry_after_ms, delay_ms, ahead_ms = algorithm.refund(read_state, now, cost, p)
    write(key, p, state, reset_ms, ahead_ms, false, key_expires_at, length)
  else
    state, allowed, remaining, reset_ms, retry_after_ms, delay_ms, ahead_ms =
      algorithm.step(read_state, now, cost, p, mode == 'charge')
    if state ~= read_state then write(key, p, state, reset_ms, ahead_ms, false, key_expires_at, length) end
  end
  append(allowed, remaining, reset_ms, retry_after_ms, delay_ms, ahead_ms)
end

-- One request: its rules, its keys from KEYS[first], its mode and cost, at `now`. Appends its numbers to the reply,
-- or raises the error of this request alone.
local function decide(rules, first, mode, cost)
  local count = #rules
  for i = 1, count do check_clock(rules[i]) end
  -- Per rule: its key's state, when that and the key expire, when its key's block ends and its block key (a rule with
  -- a block), then its step.
  local states, expiries, key_expiries, lengths, blocked_untils, block_keys, steps = {}, {}, {}, {}, {}, {}, {}
  local blocks = first + count - 1
  for i = 1, count do
    local p = rules[i]
    local state, unusable, key_expires_at, length, expires_at = read(KEYS[first + i - 1], p)
    if unusable then error('SLUICEKEY ' .. i .. ' ' .. unusable, 0) end
    states[i] = state
    expiries[i] = expires_at
    key_expiries[i] = key_expires_at
    lengths[i] = length
    -- A refund leaves blocks alone, as MemoryStore.refund does (it does not even look at them).
    if p.block_ms > 0 then
      blocks = blocks + 1
      if mode ~= 'refund' then
        local block_key = KEYS[blocks]
        block_keys[i] = block_key
        local blocked_until = redis.pcall('GET', block_key)
        if type(blocked_until) == 'table' and blocked_until.err then
          error('SLUICEKEY ' .. i .. ' block key holds a ' .. redis.call('TYPE', block_key).ok, 0)
        end
        blocked_until = tonumber(blocked_until)
        if blocked_until ~= nil and blocked_until <= now then
          redis.call('DEL', block_key) -- an ended block stays ended, as a state that expired (see read)
          blocked_until = nil
        end
        blocked_untils[i] = blocked_until
      end
    end
  end

  if mode == 'refund' then
    -- As MemoryStore.refund: each key on its own; a key with nothing left is not written.
    for i = 1, count do
      local p = rules[i]
      if states[i] == nil then
        steps[i] = step_of(p.algorithm.step(nil, now, 1, p, false))
      else
        local step = step_of(p.algorithm.refund(states[i], now, cost, p))
        steps[i] = step
        write(KEYS[first + i - 1], p, step.state, step.reset_ms, step.ahead_ms, false, key_expiries[i], lengths[i])
      end
    end
  else
    local charge = mode == 'charge'
    local rejected = false
    for i = 1, count do
      local p = rules[i]
      local blocked = is_blocked(blocked_untils[i], now)
      local step = step_of(p.algorithm.step(states[i], now, cost, p, charge and not blocked))
      if blocked then step = blocked_step(step, now, blocked_untils[i]) end
      if not step.allowed then rejected = true end
      steps[i] = step
    end
    if rejected and charge then
      -- Nothing is charged, so the rules that would have admitted report their uncharged view; each rule that
      -- rejected and has a block starts one, unless its key was blocked already (a block is never extended).
      for i = 1, count do
        local p = rules[i]
        if steps[i].allowed then
          steps[i] = step_of(p.algorithm.step(states[i], now, cost, p, false))
        elseif p.block_ms > 0 and not is_blocked(blocked_untils[i], now) then
          local blocked_until = now + p.block_ms
          set_expiring(block_keys[i], string.format('%.0f', blocked_until), p.block_ms)
          steps[i] = blocked_step(steps[i], now, blocked_until)
        end
      end
    end
    -- Every new state is written: each rule's when all charged, else only those whose key's offset from the clock
    -- changed (see key-time.lua).
    for i = 1, count do
      local step = steps[i]
      local expires_at = expiries[i]
      if step.state ~= states[i] then
        write(KEYS[first + i - 1], rules[i], step.state, step.reset_ms, step.ahead_ms, step.block_left_ms ~= nil,
          key_expiries[i], lengths[i])
        expires_at = now + step.reset_ms + step.ahead_ms
      end
      -- A block holds a refusal for the short-circuit no longer than the rule's state lives: the call that finds it
      -- expired deletes it, as MemoryStore does, and a clock that then steps back must find it gone here too.
      if step.block_left_ms ~= nil and step.state ~= nil and expires_at ~= nil then
        step.block_left_ms = math.min(step.block_left_ms, expires_at - now)
      end
    end
  end

  for i = 1, count do append_step(steps[i]) end
end

-- A request that fails (a Redis error in one of its commands) fails alone: the others of the batch go on.
local function failure(problem)
  if type(problem) == 'table' and problem.err then return problem.err end
  return tostring(problem)
end

local first = 1
local arguments = #ARGV
while at < arguments do
  local count, rules = ARGV[at + 1] + 0, sets[ARGV[at + 2] + 0]
  local mode, cost, request_now = ARGV[at + 3], ARGV[at + 4] + 0, ARGV[at + 5]
  at = at + 5
  if request_now == '' then now = redis_now else now = request_now + 0 end
  local single, keys = rules.single, rules.keys
  for _ = 1, count do
    local before = n
    local ok, problem
    if single then
      ok, problem = pcall(decide_one, rules[1], KEYS[first], mode, cost)
    else
      ok, problem = pcall(decide, rules, first, mode, cost)
    end
    if not ok then
      -- The numbers of a rule that came before the failure are taken back: the request's entry is its error alone.
      for i = n, before + 1, -1 do replies[i] = nil end
      n = before + 1
      replies[n] = failure(problem)
    end
    first = first + keys
  end
end
replies[n + 1] = redis_now
for i = n + 2, 6 do replies[i] = nil end
return replies
