-- Fixed window, as packages/core/src/algorithms/fixed-window.ts: window k covers [kW, (k+1)W), counted by
-- count_within (window-count.lua).

local function fixed_window(state, now, cost, p, charge)
  local window_start = floor_div(now, p.window_ms) * p.window_ms
  return count_within(state, window_start, window_start + p.window_ms, now, cost, p.limit, charge)
end

local function fixed_window_refund(state, now, cost, p)
  local window_start = floor_div(now, p.window_ms) * p.window_ms
  return refund_within(state, window_start, window_start + p.window_ms, now, cost, p.limit)
end

local fixed_window_decode, fixed_window_encode = window_count_decode, window_count_encode
