// The layout the Redis script stores a sliding log in (packages/redis/src/lua/sliding-log.lua), for the suites and the
// bench that write a long log at once instead of by one call per entry.

/**
 * A log of `entries` admissions of cost 1, 1 ms apart from `oldestMs`, in a window of `windowMs`: a header (when it
 * expires, start, end, the running total before start), then each entry's time and running total, all little-endian
 * doubles.
 *
 * @example
 * await client.set(redisKeyOf(rule, 'k'), storedSlidingLog(20_000, Date.now() - 20_000, rule.windowMs), 'PX', 3_600_000)
 */
export function storedSlidingLog(entries: number, oldestMs: number, windowMs: number): Buffer {
  const value = Buffer.alloc(32 + 16 * entries)
  const header = [oldestMs + entries - 1 + windowMs, 0, entries, 0]
  for (const [i, field] of header.entries()) value.writeDoubleLE(field, 8 * i)
  for (let i = 0; i < entries; i++) {
    value.writeDoubleLE(oldestMs + i, 32 + 16 * i)
    value.writeDoubleLE(i + 1, 40 + 16 * i)
  }
  return value
}
