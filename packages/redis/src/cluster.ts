import type { Outcome } from '@sluice/core/store'
import type { Mode } from './script-runner'
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
 * which can reject another request then.
 */
export async function applyBySlot(
  groups: readonly number[][],
  mode: Mode,
  run: (group: readonly number[], mode: Mode) => Promise<readonly Outcome[]>,
): Promise<Outcome[]> {
  const outcomes: Outcome[] = []
  const answers = await Promise.all(groups.map((group) => run(group, mode)))
  groups.forEach((group, g) => {
    group.forEach((i, j) => {
      outcomes[i] = (answers[g] as readonly Outcome[])[j] as Outcome
    })
  })
  if (mode !== 'charge' || outcomes.every((outcome) => outcome.allowed)) return outcomes
  await Promise.all(
    groups.map(async (group, g) => {
      if (!(answers[g] as readonly Outcome[]).every((outcome) => outcome.allowed)) return // this slot charged nothing
      const refunded = await run(group, 'refund')
      // After the refund the key is as before: its numbers are the uncharged view.
      group.forEach((i, j) => {
        outcomes[i] = { ...(refunded[j] as Outcome), allowed: true, retryAfterMs: 0, delayMs: 0 }
      })
    }),
  )
  return outcomes
}
