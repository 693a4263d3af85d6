-- Token bucket, as packages/core/src/algorithms/token-bucket.ts. State: { tokens, updated_at }, tokens in units
-- of 1 / rate_denominator token.

-- Time never runs backwards for a key: a state updated later than now (the clock stepped back) moves back to now with
-- its tokens, and refills from there.
local function token_bucket_as_of(state, now)
  if state ~= nil and state.updated_at > now then return { tokens = state.tokens, updated_at = now } end
  return state
end

local function token_bucket(state, now, cost, p, charge)
  local capacity = p.limit * p.rate_denominator
  local tokens = capacity
  state = token_bucket_as_of(state, now)
  if state ~= nil then tokens = math.min(capacity, state.tokens + (now - state.updated_at) * p.rate_numerator) end
  local price = cost * p.rate_denominator
  if tokens < price then
    return { state = state, allowed = false, remaining = floor_div(tokens, p.rate_denominator),
      reset_ms = ceil_div(capacity - tokens, p.rate_numerator),
      retry_after_ms = ceil_div(price - tokens, p.rate_numerator), delay_ms = 0 }
  end
  if charge then tokens = tokens - price end
  local next = state
  if charge then next = { tokens = tokens, updated_at = now } end
  return { state = next, allowed = true, remaining = floor_div(tokens, p.rate_denominator),
    reset_ms = ceil_div(capacity - tokens, p.rate_numerator), retry_after_ms = 0, delay_ms = 0 }
end

local function token_bucket_refund(state, now, cost, p)
  state = token_bucket_as_of(state, now)
  if state == nil then return token_bucket(state, now, 1, p, false) end
  local capacity = p.limit * p.rate_denominator
  local tokens = math.min(capacity, state.tokens + (now - state.updated_at) * p.rate_numerator)
  local next = { tokens = math.min(capacity, tokens + cost * p.rate_denominator), updated_at = now }
  return token_bucket(next, now, 1, p, false)
end

-- Stored as little-endian doubles (exact for integers below 2^53): when the state expires, then tokens, updated_at.
local function token_bucket_decode(value)
  local expires_at, tokens, updated_at = whole_doubles(value, 3)
  if expires_at == nil then return nil end
  return expires_at, { tokens = tokens, updated_at = updated_at }
end

local function token_bucket_encode(expires_at, state)
  return struct.pack('<ddd', expires_at, state.tokens, state.updated_at)
end
