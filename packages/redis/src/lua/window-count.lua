-- The counting step of the fixed and the calendar window, as packages/core/src/algorithms/window-count.ts. State:
-- { seen_at, used, offset_ms }, the used units in the window that starts at seen_at (the key's last instant as
-- key-time.lua reads it: the start of its last charge's window, so that a refunded charge leaves it), and how far
-- the key's time was ahead of the clock (key-time.lua; always 0 for a calendar window).

-- The state as the step reads it, the key's offset from the clock in it: itself when nothing moved (then nothing is
-- written). A calendar window decides by the clock: a count from a later period than the clock's (the clock stepped
-- back) moves back to the clock's period. A fixed window decides by the key's time, never earlier than the start of
-- its last charge's window.
local function window_count_as_of(state, window_start, window_end, offset_ms)
  if state == nil then return state end
  if state.seen_at >= window_end then return { seen_at = window_start, used = state.used, offset_ms = offset_ms } end
  if state.offset_ms == offset_ms then return state end
  return { seen_at = state.seen_at, used = state.used, offset_ms = offset_ms }
end

-- now falls in the window [window_start, window_end). Admit iff used + cost <= limit; rejected requests are not
-- counted. offset_ms: how far now (the key's time) is ahead of the clock.
local function count_within(state, window_start, window_end, now, cost, limit, charge, offset_ms)
  -- window_count_as_of, called only when it changes something (see fixed_window_now).
  if state ~= nil and (state.seen_at >= window_end or state.offset_ms ~= offset_ms) then
    state = window_count_as_of(state, window_start, window_end, offset_ms)
  end
  local used = 0
  if state ~= nil and state.seen_at >= window_start then used = state.used end
  local to_window_end = window_end - now
  if used + cost > limit then
    return state, false, limit - used, to_window_end, to_window_end, 0, offset_ms
  end
  if not charge then
    return state, true, limit - used, to_window_end, 0, 0, offset_ms
  end
  -- The window's start, not the charge's instant: a charge refunded across Cluster slots then leaves the key's time
  -- where it was, as in memory, where it never charged (key-time.lua).
  local next = { seen_at = window_start, used = used + cost, offset_ms = offset_ms }
  return next, true, limit - next.used, to_window_end, 0, 0, offset_ms
end

-- Only the count of the window holding now can go down; an earlier window's is already forgotten.
local function refund_within(state, window_start, window_end, now, cost, limit, offset_ms)
  state = window_count_as_of(state, window_start, window_end, offset_ms)
  if state == nil or state.seen_at < window_start then
    return count_within(state, window_start, window_end, now, 1, limit, false, offset_ms)
  end
  -- Nothing left: a new key's state, as if never charged (a charge refunded across Cluster slots leaves no instant).
  local used = state.used - cost
  local refunded = nil
  if used > 0 then refunded = { seen_at = state.seen_at, used = used, offset_ms = offset_ms } end
  return count_within(refunded, window_start, window_end, now, 1, limit, false, offset_ms)
end

-- Stored as little-endian doubles (exact for integers below 2^53): when the state expires, then seen_at (written as
-- the window's start before, which reads the same), used, and offset_ms when it is not 0.
local function window_count_decode(value)
  local expires_at, seen_at, used, offset_ms = whole_doubles(value, 3)
  if expires_at == nil then return nil end
  return expires_at, { seen_at = seen_at, used = used, offset_ms = offset_ms }
end

local function window_count_encode(expires_at, state)
  return pack_doubles(state.offset_ms, expires_at, state.seen_at, state.used)
end
