import { type Decision, type RuleDecision, renamedDecision, stackedDecision } from '../rules/decision'
import { type HeaderMode, headerWriter, responseModes } from './headers'

/** A header writer settled for some modes (see `headerWriter`). */
type HeaderWriter = (decision: Decision, nowMs: number) => [string, string][]

/** A limiter a response passed: its decision, and the modes it sends. */
interface Passed {
  readonly decision: Decision
  readonly modes: readonly HeaderMode[]
}

/**
 * Per response, every limiter it passed so far, in order, kept on the response under a symbol of its own: a WeakMap
 * entry for each response cost more than the rest of a rejection's headers together (about half a microsecond on a
 * busy Koa server: each new key is hashed into the map's table, which grows and is swept with the responses' churn).
 */
const PASSED = Symbol('sluice.passed')

/** A response as this file sees it: any object, with the limiters it passed once one has. */
type Marked = { [PASSED]?: Passed[] }

/** The writers of merged mode lists, made once each: a few lists at most in one app. */
const WRITERS = new Map<string, HeaderWriter>()

/**
 * The rate-limit fields to set on `response` after one more limiter decided on it. A response that one limiter
 * passes gets that limiter's fields, as `write` makes them. When a second limiter decides on the same response (a
 * global limit and a route's, on Express or Koa), the fields describe all of them, and each limiter's write covers
 * every field an earlier one set, so the last write is the whole answer:
 * - the modes are every mode any of them sends, the first limiter's winning where two spell one field differently
 *   (see {@link responseModes});
 * - IETF `RateLimit-Policy` and `RateLimit` list one item per rule of every limiter, in the order the request passed
 *   them; a rule whose name an earlier limiter's rule has taken gets `-2` (`-3`, ...) after it, so that each `RateLimit`
 *   item names one policy;
 * - the single-policy fields (`'draft-7'`, `'draft-6'`, `'legacy'`) and `Retry-After` show the binding rule over all
 *   of them: the rejecting one, or else the one with the fewest remaining.
 * A limiter with `headers: false` takes no part.
 *
 * @example
 * const headers = responseHeaders(res, decision, ['ietf'], write, Date.now())
 */
export function responseHeaders(
  response: object,
  decision: Decision,
  modes: readonly HeaderMode[],
  write: HeaderWriter,
  nowMs: number,
): [string, string][] {
  if (modes.length === 0) return []
  const passed = (response as Marked)[PASSED]
  if (passed === undefined) {
    ;(response as Marked)[PASSED] = [{ decision, modes }]
    return write(decision, nowMs)
  }
  passed.push({ decision, modes })
  const merged = responseModes(passed.map((limiter) => limiter.modes))
  const name = merged.join(',')
  let writer = WRITERS.get(name)
  if (writer === undefined) {
    writer = headerWriter(merged)
    WRITERS.set(name, writer)
  }
  return writer(mergedDecision(passed), nowMs)
}

/** One decision over every rule of every limiter passed, each rule under a name no earlier rule has. */
function mergedDecision(passed: readonly Passed[]): Decision {
  const rules: RuleDecision[] = []
  const names = new Set<string>()
  for (const { decision } of passed) {
    for (const rule of decision.rules ?? [decision]) {
      let name = rule.rule
      for (let n = 2; names.has(name); n++) name = `${rule.rule}-${n}`
      names.add(name)
      rules.push(name === rule.rule ? rule : renamedDecision(rule, name))
    }
  }
  return stackedDecision(rules)
}
