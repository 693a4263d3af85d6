-- The counting step of the fixed and the calendar window, as packages/core/src/algorithms/window-count.ts. State:
-- { window_start, used }, the used units in the window that starts at window_start.

-- Time never runs backwards for a key: a count from a later window than the clock's (the clock stepped back) moves
-- back to the clock's window.
local function window_count_as_of(state, window_start)
  if state ~= nil and state.window_start > window_start then return { window_start = window_start, used = state.used } end
  return state
end

-- now falls in the window [window_start, window_end). Admit iff used + cost <= limit; rejected requests are not
-- counted.
local function count_within(state, window_start, window_end, now, cost, limit, charge)
  state = window_count_as_of(state, window_start)
  local used = 0
  if state ~= nil and state.window_start == window_start then used = state.used end
  local to_window_end = window_end - now
  if used + cost > limit then
    return { state = state, allowed = false, remaining = limit - used, reset_ms = to_window_end,
      retry_after_ms = to_window_end, delay_ms = 0 }
  end
  if not charge then
    return { state = state, allowed = true, remaining = limit - used, reset_ms = to_window_end,
      retry_after_ms = 0, delay_ms = 0 }
  end
  local next = { window_start = window_start, used = used + cost }
  return { state = next, allowed = true, remaining = limit - next.used, reset_ms = to_window_end,
    retry_after_ms = 0, delay_ms = 0 }
end

-- Only the count of the window holding now can go down; an earlier window's is already forgotten.
local function refund_within(state, window_start, window_end, now, cost, limit)
  state = window_count_as_of(state, window_start)
  if state == nil or state.window_start ~= window_start then
    return count_within(state, window_start, window_end, now, 1, limit, false)
  end
  local refunded = { window_start = window_start, used = math.max(0, state.used - cost) }
  return count_within(refunded, window_start, window_end, now, 1, limit, false)
end

-- Stored as little-endian doubles (exact for integers below 2^53): when the state expires, then window_start, used.
local function window_count_decode(value)
  local expires_at, window_start, used = whole_doubles(value, 3)
  if expires_at == nil then return nil end
  return expires_at, { window_start = window_start, used = used }
end

local function window_count_encode(expires_at, state)
  return struct.pack('<ddd', expires_at, state.window_start, state.used)
end
