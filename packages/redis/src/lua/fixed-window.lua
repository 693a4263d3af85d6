-- Fixed window, as packages/core/src/algorithms/fixed-window.ts: window k covers [kW, (k+1)W), counted by
-- count_within (window-count.lua), at the key's time (key-time.lua).

-- The key's time: key_time, called only when the clock is behind the key's last instant (a call of a Lua function
-- costs Redis about 400 instructions, and every decision asks this).
local function fixed_window_now(state, clock)
  if state == nil or clock >= state.seen_at then return clock end
  return key_time(state.seen_at, state.offset_ms, clock)
end

local function fixed_window(state, clock, cost, p, charge)
  local now = fixed_window_now(state, clock)
  local window_start = floor_div(now, p.window_ms) * p.window_ms
  return count_within(state, window_start, window_start + p.window_ms, now, cost, p.limit, charge, now - clock)
end

local function fixed_window_refund(state, clock, cost, p)
  local now = fixed_window_now(state, clock)
  local window_start = floor_div(now, p.window_ms) * p.window_ms
  return refund_within(state, window_start, window_start + p.window_ms, now, cost, p.limit, now - clock)
end

local fixed_window_decode, fixed_window_encode = window_count_decode, window_count_encode
