-- Fixed window, as packages/core/src/algorithms/fixed-window.ts. State: { window_start, used }.

-- Time never runs backwards for a key: a count from a later window than the clock's (the clock stepped back) moves
-- back to the clock's window.
local function fixed_window_as_of(state, window_start)
  if state ~= nil and state.window_start > window_start then return { window_start = window_start, used = state.used } end
  return state
end

local function fixed_window(state, now, cost, p, charge)
  local window_start = floor_div(now, p.window_ms) * p.window_ms
  state = fixed_window_as_of(state, window_start)
  local used = 0
  if state ~= nil and state.window_start == window_start then used = state.used end
  local to_window_end = window_start + p.window_ms - now
  if used + cost > p.limit then
    return { state = state, allowed = false, remaining = p.limit - used, reset_ms = to_window_end,
      retry_after_ms = to_window_end, delay_ms = 0 }
  end
  if not charge then
    return { state = state, allowed = true, remaining = p.limit - used, reset_ms = to_window_end,
      retry_after_ms = 0, delay_ms = 0 }
  end
  local next = { window_start = window_start, used = used + cost }
  return { state = next, allowed = true, remaining = p.limit - next.used, reset_ms = to_window_end,
    retry_after_ms = 0, delay_ms = 0 }
end

local function fixed_window_refund(state, now, cost, p)
  local window_start = floor_div(now, p.window_ms) * p.window_ms
  state = fixed_window_as_of(state, window_start)
  if state == nil or state.window_start ~= window_start then return fixed_window(state, now, 1, p, false) end
  return fixed_window({ window_start = window_start, used = math.max(0, state.used - cost) }, now, 1, p, false)
end

-- Stored as little-endian doubles (exact for integers below 2^53): when the state expires, then window_start, used.
local function fixed_window_decode(value)
  local expires_at, window_start, used = struct.unpack('<ddd', value)
  return expires_at, { window_start = window_start, used = used }
end

local function fixed_window_encode(expires_at, state)
  return struct.pack('<ddd', expires_at, state.window_start, state.used)
end
