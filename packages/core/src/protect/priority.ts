import { describe } from '../util/errors'

/**
 * How much a request matters when the service cannot serve everything, after the criticality levels of Google's
 * SRE book: `'critical'` (a failure is seen by users: login, checkout), `'normal'` (the default), `'sheddable'`
 * (prefetches, batch work, retries that can wait). The least important is shed first, and critical work is never
 * shed while less important work waits.
 *
 * @example
 * const priority = (req: Request): Priority => (req.path.startsWith('/checkout') ? 'critical' : 'normal')
 */
export type Priority = 'critical' | 'normal' | 'sheddable'

/** The priorities, most important first; a priority's rank is its index here. */
export const PRIORITIES: readonly Priority[] = ['critical', 'normal', 'sheddable']

export const CRITICAL = 0
export const SHEDDABLE = 2

/** Adds `delta` to the count kept for one rank (a table indexed by rank, one count per priority). */
export function countAt(counts: number[], rank: number, delta: number): void {
  counts[rank] = (counts[rank] ?? 0) + delta
}

/**
 * The rank of a priority a request reported (0 is the most important). An unknown name is a bug in the caller's
 * `priority` function, so it throws naming the option rather than guessing.
 */
export function rankOf(priority: unknown, option = 'priority'): number {
  const rank = PRIORITIES.indexOf(priority as Priority)
  if (rank === -1) {
    throw new TypeError(
      `sluice: option "${option}" must return 'critical', 'normal' or 'sheddable' (got ${describe(priority)})`,
    )
  }
  return rank
}
