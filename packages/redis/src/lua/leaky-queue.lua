-- Leaky bucket as a queue (behind schedule), as packages/core/src/algorithms/leaky-queue.ts. State:
-- { departure_ms, departure_fraction }, the last departure, the fraction in units of 1 / rate_numerator ms.

-- Time never runs backwards for a key: a backlog longer than the queue (the clock stepped back) is taken as a full
-- queue as of now, which drains from there.
local function leaky_queue_as_of(state, now, p)
  local capacity = p.limit * p.rate_denominator
  if state == nil or (state.departure_ms - now) * p.rate_numerator + state.departure_fraction <= capacity then
    return state
  end
  local departure_ms = now + floor_div(capacity, p.rate_numerator)
  return { departure_ms = departure_ms, departure_fraction = capacity - (departure_ms - now) * p.rate_numerator }
end

local function leaky_queue(state, now, cost, p, charge)
  local rate_numerator, rate_denominator = p.rate_numerator, p.rate_denominator
  local capacity = p.limit * rate_denominator -- the longest wait, in units of 1 / rate_numerator ms
  state = leaky_queue_as_of(state, now, p)
  local departure_ms = now
  local departure_fraction = 0
  if state ~= nil and (state.departure_ms > now or (state.departure_ms == now and state.departure_fraction > 0)) then
    departure_ms = state.departure_ms
    departure_fraction = state.departure_fraction
  end
  local backlog = (departure_ms - now) * rate_numerator + departure_fraction
  local price = cost * rate_denominator
  if backlog + price > capacity then
    return { state = state, allowed = false, remaining = floor_div(capacity - backlog, rate_denominator),
      reset_ms = ceil_div(backlog, rate_numerator),
      retry_after_ms = ceil_div(backlog + price - capacity, rate_numerator), delay_ms = 0 }
  end
  if not charge then
    return { state = state, allowed = true, remaining = floor_div(capacity - backlog, rate_denominator),
      reset_ms = ceil_div(backlog, rate_numerator), retry_after_ms = 0, delay_ms = 0 }
  end
  local fraction = departure_fraction + price
  departure_ms = departure_ms + floor_div(fraction, rate_numerator)
  departure_fraction = math.fmod(fraction, rate_numerator)
  local wait = backlog + price
  local delay_ms = ceil_div(wait, rate_numerator)
  return { state = { departure_ms = departure_ms, departure_fraction = departure_fraction }, allowed = true,
    remaining = floor_div(capacity - wait, rate_denominator), reset_ms = delay_ms, retry_after_ms = 0,
    delay_ms = delay_ms }
end

local function leaky_queue_refund(state, now, cost, p)
  local rate_numerator, rate_denominator = p.rate_numerator, p.rate_denominator
  state = leaky_queue_as_of(state, now, p)
  if state == nil then return leaky_queue(state, now, 1, p, false) end
  local backlog = (state.departure_ms - now) * rate_numerator + state.departure_fraction - cost * rate_denominator
  if backlog <= 0 then return leaky_queue(nil, now, 1, p, false) end
  local departure_ms = now + floor_div(backlog, rate_numerator)
  local next = { departure_ms = departure_ms,
    departure_fraction = backlog - (departure_ms - now) * rate_numerator }
  return leaky_queue(next, now, 1, p, false)
end

-- Stored as little-endian doubles (exact for integers below 2^53): when the state expires, then
-- departure_ms, departure_fraction.
local function leaky_queue_decode(value)
  local expires_at, departure_ms, departure_fraction = whole_doubles(value, 3)
  if expires_at == nil then return nil end
  return expires_at, { departure_ms = departure_ms, departure_fraction = departure_fraction }
end

local function leaky_queue_encode(expires_at, state)
  return struct.pack('<ddd', expires_at, state.departure_ms, state.departure_fraction)
end
