-- A key's time never runs backwards, as packages/core/src/algorithms/key-time.ts: the clock once it is at or past the
-- key's last instant (seen_at); before it (the clock stepped back), the later of seen_at and the clock plus the key's
-- offset, so that the key's time moves on as the clock does, and a clock that comes back decides again.

local function key_time(seen_at, offset_ms, clock)
  if clock >= seen_at then return clock end
  return math.max(seen_at, clock + offset_ms)
end
