import type { Outcome } from '@sluice/core/store'
import { Unanswered } from './health'
import type { Mode } from './rule-set'
import { keySlot } from './slot'

/**
 * Indexes of the keys, grouped by cluster slot, each group and the groups in the order of the rules.
 *
 * @example
 * groupBySlot(['a:{x}', 'b:{y}', 'c:{x}']) // [[0, 2], [1]]
 */
export function groupBySlot(redisKeys: readonly string[]): number[][] {
  const groups = new Map<number, number[]>()
  redisKeys.forEach((key, i) => {
    const slot = keySlot(key)
    const group = groups.get(slot)
    if (group === undefined) groups.set(slot, [i])
    else group.push(i)
  })
  return [...groups.values()]
}

/** The items at `indexes`, in that order. */
export function pick<T>(items: readonly T[], indexes: readonly number[]): T[] {
  return indexes.map((i) => items[i] as T)
}

/**
 * Applies the rules of one request whose keys live in several slots of a Cluster: one call per slot (`run` evaluates
 * the rules at a group's indexes), all at once. When a slot rejects a charged request, nothing may stay charged, so
 * the slots that admitted (and charged) are refunded; their rules then report the uncharged view, as
 * `evaluateRules` does on one node. Between the charge and the refund (one round trip) those keys hold the cost,
 * which can reject another request then. When a slot was not decided (Unanswered, or a key error), the request is not
 * decided by Redis at all: the slots that charged are refunded, and that Unanswered (or error) is the answer.
 */
export async function applyBySlot<O extends Outcome>(
  groups: readonly (readonly number[])[],
  mode: Mode,
  run: (group: readonly number[], mode: Mode) => Promise<readonly O[] | Unanswered>,
): Promise<O[] | Unanswered> {
  const settled = await Promise.allSettled(groups.map((group) => run(group, mode)))
  const answers = settled.map((s) => (s.status === 'fulfilled' ? s.value : undefined))
  const failed = settled.find((s) => s.status === 'rejected')
  const unanswered = answers.find((answer) => answer instanceof Unanswered)
  if (failed !== undefined || unanswered !== undefined) {
    if (mode === 'charge') {
      groups.forEach((group, g) => {
        const answer = answers[g]
        if (Array.isArray(answer) && answer.every((outcome) => outcome.allowed)) {
          // Best effort, not awaited: the request is answered by the failure policy either way.
          run(group, 'refund').catch(() => {})
        }
      })
    }
    if (failed !== undefined) throw failed.reason
    return unanswered as Unanswered
  }
  const outcomes: O[] = []
  groups.forEach((group, g) => {
    group.forEach((i, j) => {
      outcomes[i] = (answers[g] as readonly O[])[j] as O
    })
  })
  if (mode !== 'charge' || outcomes.every((outcome) => outcome.allowed)) return outcomes
  await Promise.all(
    groups.map(async (group, g) => {
      if (!(answers[g] as readonly O[]).every((outcome) => outcome.allowed)) return // this slot charged nothing
      const refunded = await run(group, 'refund').catch(() => undefined)
      // A refund that failed leaves the slot charged until its window passes; its outcomes stay as they were.
      if (!Array.isArray(refunded)) return
      // After the refund the key is as before: its numbers are the uncharged view.
      group.forEach((i, j) => {
        outcomes[i] = { ...(refunded[j] as O), allowed: true, retryAfterMs: 0, delayMs: 0 }
      })
    }),
  )
  return outcomes
}
