-- Sliding log, as packages/core/src/algorithms/sliding-log.ts. State: { times = {...}, costs = {...} }, oldest
-- first (Lua arrays count from 1 where the TypeScript counts from 0).

-- Time never runs backwards for a key: when the newest entry is later than now (the clock stepped back), every entry
-- moves back by the same amount, so that the newest is now.
local function sliding_log_as_of(state, now)
  if state == nil or #state.times == 0 then return state end
  local shift = now - state.times[#state.times]
  if shift >= 0 then return state end
  local times = {}
  for i = 1, #state.times do times[i] = state.times[i] + shift end
  return { times = times, costs = state.costs }
end

local function sliding_log(state, now, cost, p, charge)
  state = sliding_log_as_of(state, now)
  local oldest = now - p.window_ms -- entries at or before this instant have expired
  local first = 1
  local used = 0
  local times = {}
  local costs = {}
  if state ~= nil then
    times = state.times
    costs = state.costs
    while first <= #times and times[first] <= oldest do first = first + 1 end
    for i = first, #costs do used = used + costs[i] end
  end
  local newest = nil
  if #times >= first then newest = times[#times] end
  if used + cost > p.limit then
    -- Walk the oldest entries until enough has expired to make room for this cost.
    local freed = 0
    local retry_after_ms = INFINITY
    for i = first, #times do
      freed = freed + costs[i]
      if used - freed + cost <= p.limit then
        retry_after_ms = times[i] + p.window_ms - now
        break
      end
    end
    local reset_ms = 0
    if newest ~= nil then reset_ms = newest + p.window_ms - now end
    return { state = state, allowed = false, remaining = p.limit - used, reset_ms = reset_ms,
      retry_after_ms = retry_after_ms, delay_ms = 0 }
  end
  if not charge then
    local reset_ms = 0
    if newest ~= nil then reset_ms = newest + p.window_ms - now end
    return { state = state, allowed = true, remaining = p.limit - used, reset_ms = reset_ms,
      retry_after_ms = 0, delay_ms = 0 }
  end
  local next_times = {}
  local next_costs = {}
  for i = first, #times do
    next_times[#next_times + 1] = times[i]
    next_costs[#next_costs + 1] = costs[i]
  end
  if newest == now then
    next_costs[#next_costs] = next_costs[#next_costs] + cost
  else
    next_times[#next_times + 1] = now
    next_costs[#next_costs + 1] = cost
  end
  return { state = { times = next_times, costs = next_costs }, allowed = true, remaining = p.limit - used - cost,
    reset_ms = p.window_ms, retry_after_ms = 0, delay_ms = 0 }
end

local function sliding_log_refund(state, now, cost, p)
  if state == nil then return sliding_log(state, now, 1, p, false) end
  state = sliding_log_as_of(state, now)
  local times = {}
  local costs = {}
  for i = 1, #state.times do
    times[i] = state.times[i]
    costs[i] = state.costs[i]
  end
  local left = cost
  while left > 0 and #costs > 0 do
    local last = #costs
    local taken = math.min(left, costs[last])
    left = left - taken
    if taken == costs[last] then
      costs[last] = nil
      times[last] = nil
    else
      costs[last] = costs[last] - taken
    end
  end
  if #times > 0 then return sliding_log({ times = times, costs = costs }, now, 1, p, false) end
  return sliding_log(nil, now, 1, p, false)
end

-- Stored as little-endian doubles (exact for integers below 2^53): when the state expires, then each entry's time
-- and cost, oldest first.
local function sliding_log_decode(value)
  local expires_at, at = struct.unpack('<d', value)
  local times = {}
  local costs = {}
  for i = 1, (#value - 8) / 16 do
    times[i], costs[i], at = struct.unpack('<dd', value, at)
  end
  return expires_at, { times = times, costs = costs }
end

local function sliding_log_encode(expires_at, state)
  local parts = { struct.pack('<d', expires_at) }
  for i = 1, #state.times do parts[i + 1] = struct.pack('<dd', state.times[i], state.costs[i]) end
  return table.concat(parts)
end
