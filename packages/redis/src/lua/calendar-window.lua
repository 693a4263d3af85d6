-- Calendar window, as packages/core/src/algorithms/calendar-window.ts. State: { period_start, used }. The period
-- boundaries come from the instance (p.boundaries, around its clock); period_at picks the one containing the Redis
-- clock. main.lua has already refused a time outside them (see calendar_window_outside).

-- Time never runs backwards for a key: a count from a later period than the clock's (the clock stepped back) moves
-- back to the clock's period.
local function calendar_window_as_of(state, period_start)
  if state ~= nil and state.period_start > period_start then return { period_start = period_start, used = state.used } end
  return state
end

local function calendar_window(state, now, cost, p, charge)
  local period_start, period_end = period_at(p.boundaries, now)
  state = calendar_window_as_of(state, period_start)
  local used = 0
  if state ~= nil and state.period_start == period_start then used = state.used end
  local to_period_end = period_end - now
  if used + cost > p.limit then
    return { state = state, allowed = false, remaining = p.limit - used, reset_ms = to_period_end,
      retry_after_ms = to_period_end, delay_ms = 0 }
  end
  if not charge then
    return { state = state, allowed = true, remaining = p.limit - used, reset_ms = to_period_end,
      retry_after_ms = 0, delay_ms = 0 }
  end
  local next = { period_start = period_start, used = used + cost }
  return { state = next, allowed = true, remaining = p.limit - next.used, reset_ms = to_period_end,
    retry_after_ms = 0, delay_ms = 0 }
end

local function calendar_window_refund(state, now, cost, p)
  local period_start = period_at(p.boundaries, now)
  state = calendar_window_as_of(state, period_start)
  if state == nil or state.period_start ~= period_start then return calendar_window(state, now, 1, p, false) end
  return calendar_window({ period_start = period_start, used = math.max(0, state.used - cost) }, now, 1, p, false)
end

-- Stored as little-endian doubles (exact for integers below 2^53): when the state expires, then period_start, used.
local function calendar_window_decode(value)
  local expires_at, period_start, used = struct.unpack('<ddd', value)
  return expires_at, { period_start = period_start, used = used }
end

local function calendar_window_encode(expires_at, state)
  return struct.pack('<ddd', expires_at, state.period_start, state.used)
end

-- Whether the Redis clock is outside the boundaries the instance sent: the two clocks disagree by more than a
-- period. main.lua then answers with the Redis time instead of deciding, and the instance asks again with
-- boundaries around that time, so no request is ever counted in a period nobody computed.
local function calendar_window_outside(p, now)
  local _, _, outside = period_at(p.boundaries, now)
  return outside ~= 0
end
