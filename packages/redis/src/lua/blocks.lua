-- Blocks, as packages/core/src/blocks.ts: a rule's step while its key is blocked until blocked_until (the rule's
-- `block` option). Refused, nothing remaining; the wait is the rest of the block, or longer when the rule itself
-- would still refuse the request then. `step` is the rule's own uncharged view at the same instant, as a table (see
-- step_of in main.lua). block_left_ms goes back to the instance (in the place of delay_ms, see main.lua), for its
-- short-circuit.

local function blocked_step(step, now, blocked_until)
  local block_left = blocked_until - now
  local retry_after_ms = 0
  if not step.allowed then retry_after_ms = step.retry_after_ms end
  return { state = step.state, allowed = false, remaining = 0, reset_ms = math.max(block_left, step.reset_ms),
    retry_after_ms = math.max(block_left, retry_after_ms), delay_ms = 0, block_left_ms = block_left,
    ahead_ms = step.ahead_ms }
end

local function is_blocked(blocked_until, now)
  return blocked_until ~= nil and blocked_until > now
end
