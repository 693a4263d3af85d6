-- Sliding window counter, as packages/core/src/algorithms/sliding-window.ts. State: { window_start, previous,
-- current }.

-- Time never runs backwards for a key: counts from a later window than the clock's (the clock stepped back) move back
-- to the clock's window.
local function sliding_window_as_of(state, window_start)
  if state == nil or state.window_start <= window_start then return state end
  return { window_start = window_start, previous = state.previous, current = state.current }
end

-- The smallest offset e' in a window where floor(weight * (W - e') / W) <= allowed; W when none qualifies.
local function first_offset_at_most(weight, allowed, window_ms)
  if weight == 0 then return 0 end
  return math.max(0, window_ms - floor_div((allowed + 1) * window_ms - 1, weight))
end

-- Time until the weighted estimate would let cost through, exactly from the formula.
local function sliding_retry_after_ms(previous, current, elapsed, cost, limit, window_ms)
  -- Still in this window: the previous window's weight has to fall far enough.
  local room = limit - current - cost
  if room >= 0 then
    local offset = first_offset_at_most(previous, room, window_ms)
    if offset < window_ms then return offset - elapsed end
  end
  -- In the next window this window's count becomes the previous one, and nothing is current.
  return window_ms - elapsed + first_offset_at_most(current, limit - cost, window_ms)
end

-- Time until the estimate is 0 and stays 0.
local function sliding_reset_ms(previous, current, elapsed, window_ms)
  if current == 0 then return math.max(0, first_offset_at_most(previous, 0, window_ms) - elapsed) end
  return window_ms - elapsed + first_offset_at_most(current, 0, window_ms)
end

local function sliding_window(state, now, cost, p, charge)
  local limit, window_ms = p.limit, p.window_ms
  local window_start = floor_div(now, window_ms) * window_ms
  state = sliding_window_as_of(state, window_start)
  local previous = 0
  local current = 0
  if state ~= nil then
    if state.window_start == window_start then
      previous = state.previous
      current = state.current
    elseif state.window_start == window_start - window_ms then
      previous = state.current
    end
  end
  local elapsed = now - window_start
  local estimate = floor_div(previous * (window_ms - elapsed), window_ms) + current
  if estimate + cost > limit then
    return { state = state, allowed = false, remaining = math.max(0, limit - estimate),
      reset_ms = sliding_reset_ms(previous, current, elapsed, window_ms),
      retry_after_ms = sliding_retry_after_ms(previous, current, elapsed, cost, limit, window_ms), delay_ms = 0 }
  end
  if not charge then
    return { state = state, allowed = true, remaining = limit - estimate,
      reset_ms = sliding_reset_ms(previous, current, elapsed, window_ms), retry_after_ms = 0, delay_ms = 0 }
  end
  current = current + cost
  return { state = { window_start = window_start, previous = previous, current = current }, allowed = true,
    remaining = limit - estimate - cost, reset_ms = sliding_reset_ms(previous, current, elapsed, window_ms),
    retry_after_ms = 0, delay_ms = 0 }
end

local function sliding_window_refund(state, now, cost, p)
  if state == nil then return sliding_window(state, now, 1, p, false) end
  local next = { window_start = state.window_start, previous = state.previous,
    current = math.max(0, state.current - cost) }
  return sliding_window(next, now, 1, p, false)
end

-- Stored as little-endian doubles (exact for integers below 2^53): when the state expires, then
-- window_start, previous, current.
local function sliding_window_decode(value)
  local expires_at, window_start, previous, current = whole_doubles(value, 4)
  if expires_at == nil then return nil end
  return expires_at, { window_start = window_start, previous = previous, current = current }
end

local function sliding_window_encode(expires_at, state)
  return struct.pack('<dddd', expires_at, state.window_start, state.previous, state.current)
end
