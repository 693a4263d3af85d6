-- Calendar window, as packages/core/src/algorithms/calendar-window.ts: the period [start, end) holding now, counted by
-- count_within (window-count.lua). The period boundaries come from the instance (p.boundaries, around its clock);
-- period_at picks the one containing the Redis clock. main.lua has already refused a time outside them (see
-- calendar_window_outside).

local function calendar_window(state, now, cost, p, charge)
  local period_start, period_end = period_at(p.boundaries, now)
  return count_within(state, period_start, period_end, now, cost, p.limit, charge, 0)
end

local function calendar_window_refund(state, now, cost, p)
  local period_start, period_end = period_at(p.boundaries, now)
  return refund_within(state, period_start, period_end, now, cost, p.limit, 0)
end

local calendar_window_decode, calendar_window_encode = window_count_decode, window_count_encode

-- Whether the Redis clock is outside the boundaries the instance sent: the two clocks disagree by more than a
-- period. main.lua then answers with the Redis time instead of deciding, and the instance asks again with
-- boundaries around that time, so no request is ever counted in a period nobody computed.
local function calendar_window_outside(p, now)
  local _, _, outside = period_at(p.boundaries, now)
  return outside ~= 0
end
