-- Token bucket, as packages/core/src/algorithms/token-bucket.ts. State: { tokens, updated_at, offset_ms }, tokens in
-- units of 1 / rate_denominator token, as of updated_at in the key's time, offset_ms ahead of the clock (key-time.lua).

-- The state with the key's new offset from the clock: itself when that has not changed (then nothing is written).
local function token_bucket_as_of(state, offset_ms)
  if state.offset_ms == offset_ms then return state end
  return { tokens = state.tokens, updated_at = state.updated_at, offset_ms = offset_ms }
end

local function token_bucket(state, clock, cost, p, charge)
  local capacity = p.limit * p.rate_denominator
  local tokens = capacity
  local now = clock
  if state ~= nil then
    now = key_time(state.updated_at, state.offset_ms, clock)
    state = token_bucket_as_of(state, now - clock)
    tokens = math.min(capacity, state.tokens + (now - state.updated_at) * p.rate_numerator)
  end
  local price = cost * p.rate_denominator
  if tokens < price then
    return state, false, floor_div(tokens, p.rate_denominator), ceil_div(capacity - tokens, p.rate_numerator),
      ceil_div(price - tokens, p.rate_numerator), 0, now - clock
  end
  if charge then tokens = tokens - price end
  local next = state
  if charge then next = { tokens = tokens, updated_at = now, offset_ms = now - clock } end
  return next, true, floor_div(tokens, p.rate_denominator), ceil_div(capacity - tokens, p.rate_numerator), 0, 0,
    now - clock
end

local function token_bucket_refund(state, clock, cost, p)
  if state == nil then return token_bucket(state, clock, 1, p, false) end
  local now = key_time(state.updated_at, state.offset_ms, clock)
  local capacity = p.limit * p.rate_denominator
  local tokens = math.min(capacity, state.tokens + (now - state.updated_at) * p.rate_numerator)
  local next = { tokens = math.min(capacity, tokens + cost * p.rate_denominator), updated_at = now,
    offset_ms = now - clock }
  return token_bucket(next, clock, 1, p, false)
end

-- Stored as little-endian doubles (exact for integers below 2^53): when the state expires, then tokens, updated_at,
-- and offset_ms when it is not 0.
local function token_bucket_decode(value)
  local expires_at, tokens, updated_at, offset_ms = whole_doubles(value, 3)
  if expires_at == nil then return nil end
  return expires_at, { tokens = tokens, updated_at = updated_at, offset_ms = offset_ms }
end

local function token_bucket_encode(expires_at, state)
  return pack_doubles(state.offset_ms, expires_at, state.tokens, state.updated_at)
end
