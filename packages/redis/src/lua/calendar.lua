-- Calendar periods, as packages/core/src/calendar/period-at.ts. The instance sends consecutive period boundaries
-- around its own clock (integer ms, ascending, at least two); the script judges the period by the Redis clock.

-- The period [start, end) among the boundaries that contains now, and outside: -1 before the first boundary, 1 at or
-- after the last (the nearest period is answered, so the caller can log it or refuse), 0 within.
local function period_at(boundaries, now)
  local last = #boundaries
  if now < boundaries[1] then
    return boundaries[1], boundaries[2], -1
  end
  if now >= boundaries[last] then
    return boundaries[last - 1], boundaries[last], 1
  end
  local i = 1
  while now >= boundaries[i + 1] do i = i + 1 end
  return boundaries[i], boundaries[i + 1], 0
end
