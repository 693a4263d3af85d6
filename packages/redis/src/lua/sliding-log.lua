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
-- A key whose time is ahead of the clock (the clock stepped back, see key-time.lua) has a longer header: -1 (no
-- header's first number otherwise), when the state expires, start, end_, base and offset_ms. The earlier layout (when
-- the state expires, then each entry's time and cost) is still read, and rewritten.

local SL_HEADER = 32
local SL_STEPPED_HEADER = 48
local SL_ENTRY = 16
-- Entries read with one GETRANGE when walking past expired ones.
local SL_CHUNK = 32

-- Entry i of the log: its time and cum.
local function sliding_log_entry(state, i)
  local entry = state.entries[i]
  if entry == nil then
    local offset = state.header + SL_ENTRY * i
    local time, cum = struct.unpack('<dd', redis.call('GETRANGE', state.key, offset, offset + SL_ENTRY - 1))
    entry = { time, cum }
    state.entries[i] = entry
  end
  return entry[1], entry[2]
end

-- Reads entries from..to (inclusive) with one GETRANGE.
local function sliding_log_load(state, from, to)
  local bytes = redis.call('GETRANGE', state.key, state.header + SL_ENTRY * from, state.header + SL_ENTRY * (to + 1) - 1)
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
  return { key = state.key, start = start, end_ = end_, base = base, fresh = state.fresh, header = state.header,
    offset_ms = state.offset_ms, entries = setmetatable({}, { __index = state.entries }), writes = {} }
end

local function sliding_log_set(state, i, time, cum)
  state.entries[i] = { time, cum }
  state.writes[#state.writes + 1] = i
end

-- The key's time (key-time.lua), from its newest entry.
local function sliding_log_now(state, clock)
  return key_time(sliding_log_entry(state, state.end_ - 1), state.offset_ms, clock)
end

-- The state with the key's new offset from the clock: itself when that has not changed (then nothing is written). The
-- entries stay as they are: they are in the key's time.
local function sliding_log_as_of(state, offset_ms)
  if state.offset_ms == offset_ms then return state end
  local moved = sliding_log_view(state, state.start, state.end_, state.base)
  moved.offset_ms = offset_ms
  return moved
end

local function sliding_log(state, clock, cost, p, charge)
  if state ~= nil and state.end_ <= state.start then state = nil end
  local now = clock
  if state ~= nil then
    now = sliding_log_now(state, clock)
    state = sliding_log_as_of(state, now - clock)
  end
  local ahead_ms = now - clock
  if state == nil then
    if cost > p.limit then
      return state, false, p.limit, 0, INFINITY, 0, 0
    end
    if not charge then
      return state, true, p.limit, 0, 0, 0, 0
    end
    local next = { start = 0, end_ = 1, base = 0, fresh = true, offset_ms = 0, entries = { [0] = { now, cost } },
      writes = {} }
    return next, true, p.limit - cost, p.window_ms, 0, 0, 0
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
    return state, false, p.limit - used, reset_ms, retry_after_ms, 0, ahead_ms
  end
  if not charge then
    return state, true, p.limit - used, reset_ms, 0, 0, ahead_ms
  end
  local next
  if newest == now then
    next = sliding_log_view(state, first, end_, base)
    sliding_log_set(next, end_ - 1, now, total + cost)
  else
    next = sliding_log_view(state, first, end_ + 1, base)
    sliding_log_set(next, end_, now, total + cost)
  end
  return next, true, p.limit - used - cost, p.window_ms, 0, 0, ahead_ms
end

-- Refund: the newest entries give back `cost`, newest first: the log ends at the first entry whose running total
-- reaches what is left, and that entry keeps only what is left.
local function sliding_log_refund(state, clock, cost, p)
  if state == nil or state.end_ <= state.start then return sliding_log(nil, clock, 1, p, false) end
  state = sliding_log_as_of(state, sliding_log_now(state, clock) - clock)
  local _, total = sliding_log_entry(state, state.end_ - 1)
  local left = total - cost
  if left <= state.base then return sliding_log(nil, clock, 1, p, false) end
  local low, high = state.start, state.end_ - 1
  while low < high do
    local middle = math.floor((low + high) / 2)
    local _, cum = sliding_log_entry(state, middle)
    if cum >= left then high = middle else low = middle + 1 end
  end
  local next = sliding_log_view(state, state.start, low + 1, state.base)
  sliding_log_set(next, low, sliding_log_entry(state, low), left)
  return sliding_log(next, clock, 1, p, false)
end

-- The state of `key`, read as far as its header; nil for a key that does not exist. Second result: what the key holds
-- instead, when it is no state of this algorithm.
local function sliding_log_read(key)
  local length = redis.pcall('STRLEN', key)
  if type(length) == 'table' and length.err then return nil, 'holds a ' .. redis.call('TYPE', key).ok end
  if length == 0 then
    if redis.call('EXISTS', key) == 0 then return nil end
  elseif length % SL_ENTRY == 0 and length >= SL_HEADER + SL_ENTRY then
    local head = redis.call('GETRANGE', key, 0, SL_STEPPED_HEADER - 1)
    local header, offset_ms = SL_HEADER, 0
    local expires_at, start, end_, base = struct.unpack('<dddd', head)
    if expires_at == -1 and #head == SL_STEPPED_HEADER then
      header = SL_STEPPED_HEADER
      expires_at, start, end_, base, offset_ms = struct.unpack('<ddddd', head, 9)
    end
    if all_whole(expires_at, start, end_, base, offset_ms) and start < end_
      and end_ <= (length - header) / SL_ENTRY then
      return { key = key, expires_at = expires_at, start = start, end_ = end_, base = base, header = header,
        offset_ms = offset_ms, entries = {}, writes = {} }
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
      return { key = key, expires_at = expires_at, start = 0, end_ = end_, base = 0, fresh = true, offset_ms = 0,
        entries = entries, writes = {} }
    end
  end
  return nil, 'holds ' .. length .. ' bytes that are no state of this algorithm'
end

-- The header of a state with these numbers, the longer one when the key's time is ahead of the clock; and its length.
local function sliding_log_header(expires_at, start, end_, base, offset_ms)
  if offset_ms == 0 then return struct.pack('<dddd', expires_at, start, end_, base), SL_HEADER end
  return struct.pack('<dddddd', -1, expires_at, start, end_, base, offset_ms), SL_STEPPED_HEADER
end

-- Writes what a step changed: the changed entries and the header, and when the key expires (Redis's clock); or, for a
-- new key (or one in the earlier layout, or one whose header changes length, or once the expired prefix outgrows the
-- live entries), the live entries afresh.
local function sliding_log_write(key, state, expires_at, expire_at_ms)
  local start, end_ = state.start, state.end_
  local header, length = sliding_log_header(expires_at, start, end_, state.base, state.offset_ms)
  if state.fresh or length ~= state.header then
    -- Every live entry, read in one GETRANGE where it is not in hand yet (a clock step: rare).
    if not state.fresh then sliding_log_load(state, start, end_ - 1) end
    local parts = { (sliding_log_header(expires_at, 0, end_ - start, state.base, state.offset_ms)) }
    for i = start, end_ - 1 do parts[#parts + 1] = struct.pack('<dd', sliding_log_entry(state, i)) end
    redis.call('SET', key, table.concat(parts))
    redis.call('PEXPIREAT', key, expire_at_ms)
    return
  end
  for _, i in ipairs(state.writes) do
    local entry = state.entries[i]
    redis.call('SETRANGE', key, length + SL_ENTRY * i, struct.pack('<dd', entry[1], entry[2]))
  end
  if start >= SL_CHUNK and start > end_ - start then
    -- The expired prefix outgrew the live entries: cut it off.
    local live = redis.call('GETRANGE', key, length + SL_ENTRY * start, length + SL_ENTRY * end_ - 1)
    redis.call('SET', key, sliding_log_header(expires_at, 0, end_ - start, state.base, state.offset_ms) .. live)
  else
    redis.call('SETRANGE', key, '0', header) -- the offset as text (see `write` in main.lua)
  end
  redis.call('PEXPIREAT', key, expire_at_ms)
end
