-- Leaky bucket as a meter, as packages/core/src/algorithms/leaky-bucket.ts. State: { level, updated_at, offset_ms },
-- level in units of 1 / rate_denominator request, as of updated_at in the key's time, offset_ms ahead of the clock
-- (key-time.lua).

-- The state with the key's new offset from the clock: itself when that has not changed (then nothing is written).
local function leaky_bucket_as_of(state, offset_ms)
  if state.offset_ms == offset_ms then return state end
  return { level = state.level, updated_at = state.updated_at, offset_ms = offset_ms }
end

local function leaky_bucket(state, clock, cost, p, charge)
  local capacity = p.limit * p.rate_denominator
  local level = 0
  local now = clock
  if state ~= nil then
    now = key_time(state.updated_at, state.offset_ms, clock)
    state = leaky_bucket_as_of(state, now - clock)
    level = math.max(0, state.level - (now - state.updated_at) * p.rate_numerator)
  end
  local price = cost * p.rate_denominator
  if level + price > capacity then
    return state, false, floor_div(capacity - level, p.rate_denominator), ceil_div(level, p.rate_numerator),
      ceil_div(level + price - capacity, p.rate_numerator), 0, now - clock
  end
  if charge then level = level + price end
  local next = state
  if charge then next = { level = level, updated_at = now, offset_ms = now - clock } end
  return next, true, floor_div(capacity - level, p.rate_denominator), ceil_div(level, p.rate_numerator), 0, 0,
    now - clock
end

local function leaky_bucket_refund(state, clock, cost, p)
  if state == nil then return leaky_bucket(state, clock, 1, p, false) end
  local now = key_time(state.updated_at, state.offset_ms, clock)
  local level = math.max(0, state.level - (now - state.updated_at) * p.rate_numerator)
  local next = { level = math.max(0, level - cost * p.rate_denominator), updated_at = now, offset_ms = now - clock }
  return leaky_bucket(next, clock, 1, p, false)
end

-- Stored as little-endian doubles (exact for integers below 2^53): when the state expires, then level, updated_at,
-- and offset_ms when it is not 0.
local function leaky_bucket_decode(value)
  local expires_at, level, updated_at, offset_ms = whole_doubles(value, 3)
  if expires_at == nil then return nil end
  return expires_at, { level = level, updated_at = updated_at, offset_ms = offset_ms }
end

local function leaky_bucket_encode(expires_at, state)
  return pack_doubles(state.offset_ms, expires_at, state.level, state.updated_at)
end
