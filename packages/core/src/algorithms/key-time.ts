/**
 * The instant an algorithm decides a key by: a key's time never runs backwards. `seenAt` is the key's own last
 * instant (what its state was last written at, or for a window count the start of its window) and `offsetMs` how far
 * the key's time was ahead of the clock then (0 unless the clock stepped back).
 *
 * - The clock at or past `seenAt`: the clock decides, and the key is in step with it again (offset 0).
 * - The clock behind `seenAt` (it stepped back): the later of `seenAt` and the clock plus the offset. The key's time
 *   then moves on as the clock does, so a step back locks no client out for its length, and its counts are neither
 *   forgotten (twice the limit) nor counted again; the offset only grows.
 *
 * A clock that comes back (steps forward by at least the offset since the key was written) is taken for a clock put
 * right, not for an hour that passed: otherwise a step back and forward again would add the step to the key's time,
 * and let a window's worth through again (issue 25 item 6). An hour that did pass meanwhile costs at most one window's
 * wait, since a key's state never outlives its window.
 *
 * @example
 * keyTime(1000, 0, 400) // 1000: the clock stepped back 600 ms; the key decides as of its last instant
 * keyTime(1000, 600, 700) // 1300: 300 ms later by the clock, 300 ms later for the key
 * keyTime(1000, 600, 1000) // 1000: the clock is back; in step with it again
 */
export function keyTime(seenAt: number, offsetMs: number, clock: number): number {
  return clock >= seenAt ? clock : Math.max(seenAt, clock + offsetMs)
}
