-- Sliding log, as packages/core/src/algorithms/sliding-log.ts. Entries are counted from 0 as there: entry i, for
-- start <= i < end_, was admitted at its time; the TypeScript's costs are kept as running totals (cum: the costs of
-- every entry up to and including this one), and base is the total before entry `start`, so the costs in the window
-- are one subtraction, and the entry where enough has expired is found by halving (costs are at least 1, so totals
-- only grow). A key is not read whole on each call: the state is a view on it, and the step reads the entries it needs
-- with GETRANGE; dropping expired entries moves `start`, and the dead prefix is cut off once it outgrows the live part.
-- So a call costs O(log L) in Redis, amortized, however long the log is.
--
-- Stored as little-endian doubles (exact for integers below 2^53): a header of when the state expires, start, end_
-- and base, then per entry its time and cum. Bytes past entry end_ - 1 are left over from a refund and unused.
-- The earlier layout (when the state expires, then each entry's time and cost) is still read, and rewritten.

local SL_HEADER = 32
local SL_ENTRY = 16
-- Entries read with one GETRANGE when walking past expired ones.
local SL_CHUNK = 32

-- Entry i of the log: its time and cum.
local function sliding_log_entry(state, i)
  local entry = state.entries[i]
  if entry == nil then
    local offset = SL_HEADER + SL_ENTRY * i
    local time, cum = struct.unpack('<dd', redis.call('GETRANGE', state.key, offset, offset + SL_ENTRY - 1))
    entry = { time, cum }
    state.entries[i] = entry
  end
  return entry[1], entry[2]
end

-- Reads entries from..to (inclusive) with one GETRANGE.
local function sliding_log_load(state, from, to)
  local bytes = redis.call('GETRANGE', state.key, SL_HEADER + SL_ENTRY * from, SL_HEADER + SL_ENTRY * (to + 1) - 1)
  local at = 1
  for i = from, to do
    if state.entries[i] == nil then
      local time, cum
      time, cum, at = struct.unpack('<dd', bytes, at)
      state.entries[i] = { time, cum }
    else
      at = at + SL_ENTRY
    end
  end
end

-- A state that keeps the entries of `state` but its own changes: a step never changes the state it was given.
local function sliding_log_view(state, start, end_, base)
  return { key = state.key, start = start, end_ = end_, base = base, fresh = state.fresh,
    entries = setmetatable({}, { __index = state.entries }), writes = {} }
end

local function sliding_log_set(state, i, time, cum)
  state.entries[i] = { time, cum }
  state.writes[#state.writes + 1] = i
end

-- Time never runs backwards for a key: when the newest entry is later than now (the clock stepped back), every entry
-- moves back by the same amount, so that the newest is now. Rare, so the live entries are read and written whole.
local function sliding_log_as_of(state, now)
  if state == nil or state.end_ <= state.start then return state end
  local shift = now - sliding_log_entry(state, state.end_ - 1)
  if shift >= 0 then return state end
  if not state.fresh then sliding_log_load(state, state.start, state.end_ - 1) end
  local moved = { key = state.key, start = state.start, end_ = state.end_, base = state.base, fresh = true,
    entries = {}, writes = {} }
  for i = state.start, state.end_ - 1 do
    local time, cum = sliding_log_entry(state, i)
    moved.entries[i] = { time + shift, cum }
  end
  return moved
end

local function sliding_log(state, now, cost, p, charge)
  state = sliding_log_as_of(state, now)
  if state == nil then
    if cost > p.limit then
      return { state = state, allowed = false, remaining = p.limit, reset_ms = 0, retry_after_ms = INFINITY,
        delay_ms = 0 }
    end
    if not charge then
      return { state = state, allowed = true, remaining = p.limit, reset_ms = 0, retry_after_ms = 0, delay_ms = 0 }
    end
    local next = { start = 0, end_ = 1, base = 0, fresh = true, entries = { [0] = { now, cost } }, writes = {} }
    return { state = next, allowed = true, remaining = p.limit - cost, reset_ms = p.window_ms, retry_after_ms = 0,
      delay_ms = 0 }
  end
  local end_ = state.end_
  local oldest = now - p.window_ms -- entries at or before this instant have expired
  local first = state.start
  local base = state.base
  -- Walk past the expired entries: each is walked once, as `start` then moves past it.
  while first < end_ do
    local time, cum = sliding_log_entry(state, first)
    if time > oldest then break end
    base = cum
    first = first + 1
    if first < end_ and state.entries[first] == nil then
      sliding_log_load(state, first, math.min(end_, first + SL_CHUNK) - 1)
    end
  end
  local used = 0
  local reset_ms = 0
  local newest, total = nil, base
  if first < end_ then
    newest, total = sliding_log_entry(state, end_ - 1)
    used = total - base
    reset_ms = newest + p.window_ms - now
  end
  if used + cost > p.limit then
    -- The oldest entries that must expire to make room for this cost: the first whose running total frees enough.
    local retry_after_ms = INFINITY
    local needed = base + used + cost - p.limit
    if total >= needed then
      local low, high = first, end_ - 1
      while low < high do
        local middle = math.floor((low + high) / 2)
        local _, cum = sliding_log_entry(state, middle)
        if cum >= needed then high = middle else low = middle + 1 end
      end
      retry_after_ms = sliding_log_entry(state, low) + p.window_ms - now
    end
    return { state = state, allowed = false, remaining = p.limit - used, reset_ms = reset_ms,
      retry_after_ms = retry_after_ms, delay_ms = 0 }
  end
  if not charge then
    return { state = state, allowed = true, remaining = p.limit - used, reset_ms = reset_ms, retry_after_ms = 0,
      delay_ms = 0 }
  end
  local next
  if newest == now then
    next = sliding_log_view(state, first, end_, base)
    sliding_log_set(next, end_ - 1, now, total + cost)
  else
    next = sliding_log_view(state, first, end_ + 1, base)
    sliding_log_set(next, end_, now, total + cost)
  end
  return { state = next, allowed = true, remaining = p.limit - used - cost, reset_ms = p.window_ms,
    retry_after_ms = 0, delay_ms = 0 }
end

-- Refund: the newest entries give back `cost`, newest first: the log ends at the first entry whose running total
-- reaches what is left, and that entry keeps only what is left.
local function sliding_log_refund(state, now, cost, p)
  if state == nil or state.end_ <= state.start then return sliding_log(nil, now, 1, p, false) end
  state = sliding_log_as_of(state, now)
  local _, total = sliding_log_entry(state, state.end_ - 1)
  local left = total - cost
  if left <= state.base then return sliding_log(nil, now, 1, p, false) end
  local low, high = state.start, state.end_ - 1
  while low < high do
    local middle = math.floor((low + high) / 2)
    local _, cum = sliding_log_entry(state, middle)
    if cum >= left then high = middle else low = middle + 1 end
  end
  local next = sliding_log_view(state, state.start, low + 1, state.base)
  sliding_log_set(next, low, sliding_log_entry(state, low), left)
  return sliding_log(next, now, 1, p, false)
end

-- The state of `key`, read as far as its header; nil for a key that does not exist. Second result: what the key holds
-- instead, when it is no state of this algorithm.
local function sliding_log_read(key)
  local length = redis.pcall('STRLEN', key)
  if type(length) == 'table' and length.err then return nil, 'holds a ' .. redis.call('TYPE', key).ok end
  if length == 0 then
    if redis.call('EXISTS', key) == 0 then return nil end
  elseif length % SL_ENTRY == 0 and length >= SL_HEADER + SL_ENTRY then
    local expires_at, start, end_, base = struct.unpack('<dddd', redis.call('GETRANGE', key, 0, SL_HEADER - 1))
    if whole(expires_at) and whole(start) and whole(end_) and whole(base) and start < end_
      and end_ <= (length - SL_HEADER) / SL_ENTRY then
      return { key = key, expires_at = expires_at, start = start, end_ = end_, base = base, entries = {}, writes = {} }
    end
  elseif length % SL_ENTRY == 8 then
    -- The earlier layout: read whole, once; the next write stores it in this one.
    local value = redis.call('GET', key)
    local expires_at, at = struct.unpack('<d', value)
    local entries, cum = {}, 0
    local valid = whole(expires_at)
    for i = 0, (length - 8) / SL_ENTRY - 1 do
      local time, entry_cost
      time, entry_cost, at = struct.unpack('<dd', value, at)
      cum = cum + entry_cost
      valid = valid and whole(time) and whole(entry_cost) and entry_cost >= 1
      entries[i] = { time, cum }
    end
    local end_ = (length - 8) / SL_ENTRY
    if valid and end_ > 0 then
      return { key = key, expires_at = expires_at, start = 0, end_ = end_, base = 0, fresh = true, entries = entries,
        writes = {} }
    end
  end
  return nil, 'holds ' .. length .. ' bytes that are no state of this algorithm'
end

-- Writes what a step changed: the changed entries and the header, and when the key expires (Redis's clock); or, for a new key (or one in
-- the earlier layout, or once the expired prefix outgrows the live entries), the live entries afresh.
local function sliding_log_write(key, state, expires_at, expire_at_ms)
  local start, end_ = state.start, state.end_
  if state.fresh or (start >= SL_CHUNK and start > end_ - start) then
    local parts = { struct.pack('<dddd', expires_at, 0, end_ - start, state.base) }
    if state.fresh then
      for i = start, end_ - 1 do parts[#parts + 1] = struct.pack('<dd', sliding_log_entry(state, i)) end
    else
      for _, i in ipairs(state.writes) do
        local entry = state.entries[i]
        redis.call('SETRANGE', key, SL_HEADER + SL_ENTRY * i, struct.pack('<dd', entry[1], entry[2]))
      end
      parts[2] = redis.call('GETRANGE', key, SL_HEADER + SL_ENTRY * start, SL_HEADER + SL_ENTRY * end_ - 1)
    end
    redis.call('SET', key, table.concat(parts))
    redis.call('PEXPIREAT', key, expire_at_ms)
    return
  end
  for _, i in ipairs(state.writes) do
    local entry = state.entries[i]
    redis.call('SETRANGE', key, SL_HEADER + SL_ENTRY * i, struct.pack('<dd', entry[1], entry[2]))
  end
  redis.call('SETRANGE', key, 0, struct.pack('<dddd', expires_at, start, end_, state.base))
  redis.call('PEXPIREAT', key, expire_at_ms)
end
