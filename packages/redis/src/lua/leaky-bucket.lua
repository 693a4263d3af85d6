-- Leaky bucket as a meter, as packages/core/src/algorithms/leaky-bucket.ts. State: { level, updated_at }, level
-- in units of 1 / rate_denominator request.

-- Time never runs backwards for a key: a state updated later than now (the clock stepped back) moves back to now with
-- its level, and drains from there.
local function leaky_bucket_as_of(state, now)
  if state ~= nil and state.updated_at > now then return { level = state.level, updated_at = now } end
  return state
end

local function leaky_bucket(state, now, cost, p, charge)
  local capacity = p.limit * p.rate_denominator
  local level = 0
  state = leaky_bucket_as_of(state, now)
  if state ~= nil then level = math.max(0, state.level - (now - state.updated_at) * p.rate_numerator) end
  local price = cost * p.rate_denominator
  if level + price > capacity then
    return { state = state, allowed = false, remaining = floor_div(capacity - level, p.rate_denominator),
      reset_ms = ceil_div(level, p.rate_numerator),
      retry_after_ms = ceil_div(level + price - capacity, p.rate_numerator), delay_ms = 0 }
  end
  if charge then level = level + price end
  local next = state
  if charge then next = { level = level, updated_at = now } end
  return { state = next, allowed = true, remaining = floor_div(capacity - level, p.rate_denominator),
    reset_ms = ceil_div(level, p.rate_numerator), retry_after_ms = 0, delay_ms = 0 }
end

local function leaky_bucket_refund(state, now, cost, p)
  state = leaky_bucket_as_of(state, now)
  if state == nil then return leaky_bucket(state, now, 1, p, false) end
  local level = math.max(0, state.level - (now - state.updated_at) * p.rate_numerator)
  local next = { level = math.max(0, level - cost * p.rate_denominator), updated_at = now }
  return leaky_bucket(next, now, 1, p, false)
end

-- Stored as little-endian doubles (exact for integers below 2^53): when the state expires, then level, updated_at.
local function leaky_bucket_decode(value)
  local expires_at, level, updated_at = whole_doubles(value, 3)
  if expires_at == nil then return nil end
  return expires_at, { level = level, updated_at = updated_at }
end

local function leaky_bucket_encode(expires_at, state)
  return struct.pack('<ddd', expires_at, state.level, state.updated_at)
end
