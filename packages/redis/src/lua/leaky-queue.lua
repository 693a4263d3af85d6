-- Leaky bucket as a queue (behind schedule), as packages/core/src/algorithms/leaky-queue.ts. State:
-- { departure_ms, departure_fraction, offset_ms }, the last departure in the key's time (key-time.lua), the fraction
-- in units of 1 / rate_numerator ms.

-- The key's last instant, as far as the queue can tell: never earlier than its capacity's wait before its last
-- departure.
local function leaky_queue_seen_at(state, p)
  return state.departure_ms - floor_div(p.limit * p.rate_denominator, p.rate_numerator)
end

-- The state as of the key's time now, offset_ms ahead of the clock: itself when nothing moved (then nothing is
-- written). A backlog longer than the queue (by the fraction seen_at rounds off) is taken as a full queue.
local function leaky_queue_as_of(state, now, p, offset_ms)
  local capacity = p.limit * p.rate_denominator
  if (state.departure_ms - now) * p.rate_numerator + state.departure_fraction <= capacity then
    if state.offset_ms == offset_ms then return state end
    return { departure_ms = state.departure_ms, departure_fraction = state.departure_fraction, offset_ms = offset_ms }
  end
  local departure_ms = now + floor_div(capacity, p.rate_numerator)
  return { departure_ms = departure_ms, departure_fraction = capacity - (departure_ms - now) * p.rate_numerator,
    offset_ms = offset_ms }
end

local function leaky_queue(state, clock, cost, p, charge)
  local rate_numerator, rate_denominator = p.rate_numerator, p.rate_denominator
  local capacity = p.limit * rate_denominator -- the longest wait, in units of 1 / rate_numerator ms
  local now = clock
  if state ~= nil then
    now = key_time(leaky_queue_seen_at(state, p), state.offset_ms, clock)
    state = leaky_queue_as_of(state, now, p, now - clock)
  end
  local ahead_ms = now - clock
  local departure_ms = now
  local departure_fraction = 0
  if state ~= nil and (state.departure_ms > now or (state.departure_ms == now and state.departure_fraction > 0)) then
    departure_ms = state.departure_ms
    departure_fraction = state.departure_fraction
  end
  local backlog = (departure_ms - now) * rate_numerator + departure_fraction
  local price = cost * rate_denominator
  if backlog + price > capacity then
    return state, false, floor_div(capacity - backlog, rate_denominator), ceil_div(backlog, rate_numerator),
      ceil_div(backlog + price - capacity, rate_numerator), 0, ahead_ms
  end
  if not charge then
    return state, true, floor_div(capacity - backlog, rate_denominator), ceil_div(backlog, rate_numerator), 0, 0,
      ahead_ms
  end
  local fraction = departure_fraction + price
  departure_ms = departure_ms + floor_div(fraction, rate_numerator)
  departure_fraction = math.fmod(fraction, rate_numerator)
  local wait = backlog + price
  local delay_ms = ceil_div(wait, rate_numerator)
  local next = { departure_ms = departure_ms, departure_fraction = departure_fraction, offset_ms = ahead_ms }
  return next, true, floor_div(capacity - wait, rate_denominator), delay_ms, 0, delay_ms, ahead_ms
end

local function leaky_queue_refund(state, clock, cost, p)
  local rate_numerator, rate_denominator = p.rate_numerator, p.rate_denominator
  if state == nil then return leaky_queue(state, clock, 1, p, false) end
  local now = key_time(leaky_queue_seen_at(state, p), state.offset_ms, clock)
  state = leaky_queue_as_of(state, now, p, now - clock)
  local backlog = (state.departure_ms - now) * rate_numerator + state.departure_fraction - cost * rate_denominator
  if backlog <= 0 then return leaky_queue(nil, clock, 1, p, false) end
  local departure_ms = now + floor_div(backlog, rate_numerator)
  local next = { departure_ms = departure_ms,
    departure_fraction = backlog - (departure_ms - now) * rate_numerator, offset_ms = now - clock }
  return leaky_queue(next, clock, 1, p, false)
end

-- Stored as little-endian doubles (exact for integers below 2^53): when the state expires, then
-- departure_ms, departure_fraction, and offset_ms when it is not 0.
local function leaky_queue_decode(value)
  local expires_at, departure_ms, departure_fraction, offset_ms = whole_doubles(value, 3)
  if expires_at == nil then return nil end
  return expires_at, { departure_ms = departure_ms, departure_fraction = departure_fraction, offset_ms = offset_ms }
end

local function leaky_queue_encode(expires_at, state)
  return pack_doubles(state.offset_ms, expires_at, state.departure_ms, state.departure_fraction)
end
