-- Sliding window counter, as packages/core/src/algorithms/sliding-window.ts. State: { seen_at, previous, current,
-- offset_ms }: the counts of the window that starts at seen_at (the window of the key's last charge: its start, not
-- the charge's instant, so that a charge refunded across Cluster slots leaves it) and of the one before, decided at
-- the key's time (key-time.lua).

-- The state with the key's new offset from the clock: itself when that has not changed (then nothing is written).
local function sliding_window_as_of(state, offset_ms)
  if state.offset_ms == offset_ms then return state end
  return { seen_at = state.seen_at, previous = state.previous, current = state.current, offset_ms = offset_ms }
end

-- The smallest offset e' in a window where floor(weight * (W - e') / W) <= allowed; W when none qualifies. (Math.max
-- in TypeScript; a comparison here, since a call of math.max costs Redis about 800 instructions, and every decision
-- makes one; and floor_div's quotient of a number from 0 without its call, about 400.)
local function first_offset_at_most(weight, allowed, window_ms)
  if weight == 0 then return 0 end
  local at_most = (allowed + 1) * window_ms - 1
  local offset
  if at_most >= 0 then
    offset = window_ms - (at_most - at_most % weight) / weight
  else
    offset = window_ms - floor_div(at_most, weight)
  end
  if offset < 0 then return 0 end
  return offset
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

-- Time until the estimate is 0 and stays 0. Every decision asks it, and first_offset_at_most(weight, 0, window_ms)
-- is, for a weight from 1, window_ms - floor((window_ms - 1) / weight), from 1: worked out here, without its call.
local function sliding_reset_ms(previous, current, elapsed, window_ms)
  local last = window_ms - 1
  if current == 0 then
    if previous == 0 then return 0 end
    local reset_ms = window_ms - (last - last % previous) / previous - elapsed
    if reset_ms < 0 then return 0 end
    return reset_ms
  end
  return window_ms - elapsed + window_ms - (last - last % current) / current
end

local function sliding_window(state, clock, cost, p, charge)
  local limit, window_ms = p.limit, p.window_ms
  local now = clock
  if state ~= nil then
    -- key_time and sliding_window_as_of, called only when they change something (a call of a Lua function costs
    -- Redis about 400 instructions): the clock behind the key's last instant, an offset that moved.
    if clock < state.seen_at then now = key_time(state.seen_at, state.offset_ms, clock) end
    if state.offset_ms ~= now - clock then state = sliding_window_as_of(state, now - clock) end
  end
  local ahead_ms = now - clock
  local window_start = floor_div(now, window_ms) * window_ms
  local previous = 0
  local current = 0
  if state ~= nil then
    -- seen_at is a whole number from 0 (decode checks it), so % is floor_div's remainder, without its call.
    local seen_at = state.seen_at
    local state_window_start = seen_at - seen_at % window_ms
    if state_window_start == window_start then
      previous = state.previous
      current = state.current
    elseif state_window_start == window_start - window_ms then
      previous = state.current
    end
  end
  local elapsed = now - window_start
  local weighted = previous * (window_ms - elapsed) -- from 0: floor_div's quotient, without its call
  local estimate = (weighted - weighted % window_ms) / window_ms + current
  if estimate + cost > limit then
    return state, false, math.max(0, limit - estimate), sliding_reset_ms(previous, current, elapsed, window_ms),
      sliding_retry_after_ms(previous, current, elapsed, cost, limit, window_ms), 0, ahead_ms
  end
  if not charge then
    return state, true, limit - estimate, sliding_reset_ms(previous, current, elapsed, window_ms), 0, 0, ahead_ms
  end
  current = current + cost
  -- The window's start, not the charge's instant: a charge refunded across Cluster slots then leaves the key's time
  -- where it was, as in memory, where it never charged (key-time.lua).
  local next = { seen_at = window_start, previous = previous, current = current, offset_ms = ahead_ms }
  return next, true, limit - estimate - cost, sliding_reset_ms(previous, current, elapsed, window_ms), 0, 0, ahead_ms
end

local function sliding_window_refund(state, now, cost, p)
  if state == nil then return sliding_window(state, now, 1, p, false) end
  local current = math.max(0, state.current - cost)
  -- Nothing left: a new key's state, as if never charged (a charge refunded across Cluster slots leaves no instant).
  if current == 0 and state.previous == 0 then return sliding_window(nil, now, 1, p, false) end
  local next = { seen_at = state.seen_at, previous = state.previous, current = current, offset_ms = state.offset_ms }
  return sliding_window(next, now, 1, p, false)
end

-- When the key of a state expires in Redis: the end of the window after the state's, when no count of the state's
-- window can matter any more. Each charge moves the state's own expiry later; this instant is the same for every state
-- of a window, so that every write but a window's first is made in place, keeping the key's expiry (SETRANGE rather
-- than SET with PXAT: 6 000 instructions of Redis rather than 14 000). The key outlives its state by less than a
-- window. Redis only: MemoryStore forgets the state when it expires. (seen_at is a whole number from 0, see decode:
-- % is floor_div's remainder.)
local function sliding_window_key_expires_at(state, p)
  local window_ms, seen_at = p.window_ms, state.seen_at
  return seen_at - seen_at % window_ms + 2 * window_ms
end

-- When a state becomes a new key's state, given when its key expires: when its estimate is 0 and stays 0,
-- sliding_reset_ms from the start of the state's window (as it said when the state was written, in that window or
-- the next: the same instant either way). A key that does not expire at sliding_window_key_expires_at of its state
-- holds the state's own expiry: one an earlier version of this script wrote, or a blocked step's (see `write`).
local function sliding_window_expires_at(state, p, key_expires_at)
  local window_ms, seen_at = p.window_ms, state.seen_at
  local window_start = seen_at - seen_at % window_ms
  if key_expires_at ~= window_start + 2 * window_ms then return key_expires_at end
  return window_start + sliding_reset_ms(state.previous, state.current, 0, window_ms)
end

-- Stored as little-endian doubles (exact for integers below 2^53): when the key expires, then seen_at (written as
-- the window's start before, which reads the same), previous, current, and offset_ms when it is not 0.
local function sliding_window_decode(value)
  local expires_at, seen_at, previous, current, offset_ms = whole_doubles(value, 4)
  if expires_at == nil then return nil end
  return expires_at, { seen_at = seen_at, previous = previous, current = current, offset_ms = offset_ms }
end

local function sliding_window_encode(expires_at, state)
  return pack_doubles(state.offset_ms, expires_at, state.seen_at, state.previous, state.current)
end
