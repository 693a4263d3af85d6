import type { Decision, RuleDecision } from '../limiter/limiter'
import { describe, InvalidOptionError } from '../util/errors'

/**
 * How the rate-limit state is told to clients:
 * - `'ietf'`: the structured fields of draft-ietf-httpapi-ratelimit-headers -08 to -11, one item per rule:
 *   `RateLimit-Policy: "user";q=100;w=60` and `RateLimit: "user";r=42;t=18`.
 * - `'draft-7'`: `RateLimit: limit=100, remaining=42, reset=18` and `RateLimit-Policy: 100;w=60`.
 * - `'draft-6'`: `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset` (seconds) and `RateLimit-Policy`.
 * - `'legacy'`: `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset` as a Unix time in seconds,
 *   as GitHub sends it (some services send seconds-from-now in that field instead).
 *
 * With several rules, the single-policy fields of `'draft-7'`, `'draft-6'` and `'legacy'` show the binding rule
 * (the one with the fewest remaining, or the longest wait); `RateLimit-Policy` lists every rule's limit and window
 * (`100;w=60, 500000;w=86400`), one item per distinct limit, as those drafts require.
 *
 * @example
 * const mode: HeaderMode = 'draft-7'
 */
export type HeaderMode = 'ietf' | 'draft-7' | 'draft-6' | 'legacy'

/**
 * The `headers` option: one mode, several that do not write the same field, or `false` for none.
 *
 * @example
 * app.use(rateLimit({ limit: 100, window: '1m', headers: ['ietf', 'legacy'] }))
 */
export type HeadersOption = HeaderMode | false | readonly HeaderMode[]

/**
 * Header fields to set on a response, as `[name, value]` pairs.
 *
 * @example
 * for (const [name, value] of verdict.headers) res.setHeader(name, value)
 */
export type HeaderList = readonly (readonly [name: string, value: string])[]

const FIELDS: { readonly [mode in HeaderMode]: readonly string[] } = {
  ietf: ['RateLimit-Policy', 'RateLimit'],
  'draft-7': ['RateLimit-Policy', 'RateLimit'],
  'draft-6': ['RateLimit-Policy', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'],
  legacy: ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'],
}

/**
 * Validates the `headers` option into the list of modes to send. Two modes that write the same field (say
 * `'ietf'` and `'draft-7'`, which both write `RateLimit`) cannot be combined: the client could read neither.
 *
 * @example
 * headerModes(['ietf', 'legacy']) // ['ietf', 'legacy']
 * headerModes(false)              // []
 */
export function headerModes(value: unknown, option = 'headers'): readonly HeaderMode[] {
  if (value === undefined) return ['ietf']
  if (value === false) return []
  const modes = Array.isArray(value) ? value : [value]
  const fields = new Map<string, HeaderMode>()
  for (const mode of modes) {
    if (typeof mode !== 'string' || !Object.hasOwn(FIELDS, mode)) {
      throw new InvalidOptionError(
        option,
        `must be 'ietf', 'draft-7', 'draft-6', 'legacy', false or an array of them (got ${describe(mode)})`,
      )
    }
    for (const field of FIELDS[mode as HeaderMode]) {
      const other = fields.get(field)
      if (other !== undefined) {
        throw new InvalidOptionError(option, `cannot combine '${other}' and '${mode}': both write ${field}`)
      }
      fields.set(field, mode as HeaderMode)
    }
  }
  return modes as HeaderMode[]
}

/**
 * The modes of a response that several limiters passed: every mode any of them sends, in the order they came, except
 * one that writes a field an earlier mode writes (`'draft-7'` after `'ietf'`, both `RateLimit`): the first limiter
 * the request passed (the outermost, mounted first) decides how a field is spelled, since two spellings of one field
 * are a value no parser can read.
 *
 * @example
 * responseModes([['ietf'], ['draft-7', 'legacy']]) // ['ietf', 'legacy']
 */
export function responseModes(lists: readonly (readonly HeaderMode[])[]): HeaderMode[] {
  const modes: HeaderMode[] = []
  const fields = new Set<string>()
  for (const list of lists) {
    for (const mode of list) {
      if (modes.includes(mode) || FIELDS[mode].some((field) => fields.has(field))) continue
      modes.push(mode)
      for (const field of FIELDS[mode]) fields.add(field)
    }
  }
  return modes
}

/**
 * The header of every refusal Sluice writes (429, 503, 413): RFC 6585 s4 and RFC 9111 s5.2.2.5, a refusal describes
 * this moment, so no cache may store and replay it.
 *
 * @example
 * res.setHeader(...NO_STORE)
 */
export const NO_STORE = ['Cache-Control', 'no-store'] as const

/** Whole seconds, rounded up, so a client that waits that long is never early. */
export function ceilSeconds(ms: number): number {
  return Math.ceil(ms / 1000)
}

/**
 * The `Retry-After` of a rejected decision: its wait in whole seconds, rounded up, and at least 1
 * (RFC 9110 s10.2.3 counts in whole seconds; 0 would invite an immediate retry that is rejected again).
 *
 * @example
 * retryAfterSeconds({ ...decision, retryAfterMs: 1200 }) // 2
 */
export function retryAfterSeconds(decision: Pick<RuleDecision, 'retryAfterMs'>): number {
  return Math.max(1, ceilSeconds(decision.retryAfterMs))
}

/**
 * When one rule resets, in ms from now. For a rule that rejected this request it is the wait until the request
 * would be admitted, so `Retry-After` (the longest such wait over the rules) is never earlier than any rule's `t`;
 * otherwise the time until the rule is back to its full allowance.
 */
function resetMsOf(rule: RuleDecision): number {
  if (!rule.allowed && Number.isFinite(rule.retryAfterMs)) return Math.max(1000, rule.retryAfterMs)
  return rule.resetMs
}

function resetSeconds(rule: RuleDecision): number {
  return ceilSeconds(resetMsOf(rule))
}

function windowSeconds(rule: RuleDecision): number {
  return Math.max(1, ceilSeconds(rule.windowMs))
}

/**
 * `RateLimit-Policy` of drafts 6 and 7: a list with one item per rule (`100;w=60, 500000;w=86400`), in the order of
 * the rules. Those drafts forbid two items with the same limit ("quota units"), and name none, so of the rules that
 * share a limit only one is listed: the binding rule, whose numbers `RateLimit` (or `RateLimit-Limit`) shows, or else
 * the first.
 */
function draftPolicies(decision: Decision, rules: readonly RuleDecision[]): string {
  const items: string[] = []
  const listed = new Set<number>()
  for (const rule of rules) {
    if (listed.has(rule.limit)) continue
    const shown = rule.limit === decision.limit ? decision : rule
    listed.add(rule.limit)
    items.push(`${shown.limit};w=${windowSeconds(shown)}`)
  }
  return items.join(', ')
}

/** A single rule's drafts policy is constant; stacked rules are listed as {@link draftPolicies} says. */
function draftList(decision: Decision, policy: RulePolicy): string {
  const { rules } = decision
  return rules === undefined || rules.length === 1 ? policy.draft : draftPolicies(decision, rules)
}

/**
 * Writes the rate-limit header fields of decisions in the settled modes: `rateLimit` runs once per request, so it
 * formats only what changes from one decision to the next (remaining, reset). What depends on a rule's limit and
 * window alone (the `RateLimit-Policy` value, draft-6's `RateLimit-Limit`, the quoted rule name) is formatted once
 * and reused while the decisions carry the same limit and window (a per-request limit simply formats anew).
 * `nowMs` is the wall-clock time, used only by the `'legacy'` mode's Unix reset time.
 *
 * @example
 * const write = headerWriter(['ietf'])
 * write(decision, Date.now()) // [['RateLimit-Policy', '"default";q=100;w=60'], ['RateLimit', '"default";r=42;t=18']]
 */
export function headerWriter(modes: readonly HeaderMode[]): (decision: Decision, nowMs: number) => [string, string][] {
  const policies = new Policies()
  return function rateLimitHeaders(decision, nowMs) {
    const headers: [string, string][] = []
    for (const mode of modes) {
      switch (mode) {
        case 'ietf': {
          // One list member per rule; rule names are token-safe strings (letters, digits, '_', '.', '-').
          const rules = decision.rules
          if (rules === undefined) {
            const policy = policies.of(decision)
            headers.push(['RateLimit-Policy', policy.ietf])
            headers.push(['RateLimit', policy.ietfItem(decision.remaining, resetSeconds(decision))])
          } else {
            headers.push(['RateLimit-Policy', policies.ietfList(rules)])
            const items = rules.map((r) => policies.of(r).ietfItem(r.remaining, resetSeconds(r)))
            headers.push(['RateLimit', items.join(', ')])
          }
          break
        }
        case 'draft-7': {
          const policy = policies.of(decision)
          headers.push(['RateLimit-Policy', draftList(decision, policy)])
          headers.push([
            'RateLimit',
            `limit=${policy.limit}, remaining=${decision.remaining}, reset=${resetSeconds(decision)}`,
          ])
          break
        }
        case 'draft-6': {
          const policy = policies.of(decision)
          headers.push(['RateLimit-Policy', draftList(decision, policy)])
          headers.push(['RateLimit-Limit', policy.limitText])
          headers.push(['RateLimit-Remaining', String(decision.remaining)])
          headers.push(['RateLimit-Reset', String(resetSeconds(decision))])
          break
        }
        case 'legacy':
          headers.push(['X-RateLimit-Limit', policies.of(decision).limitText])
          headers.push(['X-RateLimit-Remaining', String(decision.remaining)])
          headers.push(['X-RateLimit-Reset', String(ceilSeconds(nowMs + resetMsOf(decision)))])
          break
      }
    }
    return headers
  }
}

/**
 * The rate-limit header fields of a decision in the given modes (see {@link headerWriter}, which an HTTP limiter
 * settles once). `nowMs` is the wall-clock time, used only by the `'legacy'` mode's Unix reset time.
 *
 * @example
 * rateLimitHeaders(decision, ['ietf'], Date.now())
 * // [['RateLimit-Policy', '"default";q=100;w=60'], ['RateLimit', '"default";r=42;t=18']]
 */
export function rateLimitHeaders(decision: Decision, modes: readonly HeaderMode[], nowMs: number): HeaderList {
  return headerWriter(modes)(decision, nowMs)
}

/**
 * A rule's constant header parts, for one limit and window, and its last IETF `RateLimit` item: the requests of one
 * busy key (a flood of rejections above all) carry the same numbers for a second at a time, and a string made once is
 * also checked and copied flat once by Node's `setHeader`, where a new one is made, checked and copied every time.
 */
class RulePolicy {
  /** `"user";q=100;w=60` */
  readonly ietf: string
  /** `100;w=60` */
  readonly draft: string
  /** `100` */
  readonly limitText: string
  /** `"user"` */
  readonly quotedName: string
  private itemRemaining = -1
  private itemResetSeconds = -1
  private item = ''

  constructor(
    readonly rule: string,
    readonly limit: number,
    readonly windowMs: number,
    windowSeconds: number,
  ) {
    this.ietf = `"${rule}";q=${limit};w=${windowSeconds}`
    this.draft = `${limit};w=${windowSeconds}`
    this.limitText = String(limit)
    this.quotedName = `"${rule}"`
  }

  /** `"user";r=42;t=18` */
  ietfItem(remaining: number, resetSeconds: number): string {
    if (remaining !== this.itemRemaining || resetSeconds !== this.itemResetSeconds) {
      this.itemRemaining = remaining
      this.itemResetSeconds = resetSeconds
      this.item = `${this.quotedName};r=${remaining};t=${resetSeconds}`
    }
    return this.item
  }
}

/** The constant header parts of each rule seen, remade when a decision brings another limit or window. */
class Policies {
  private readonly known: RulePolicy[] = []
  private listed: readonly RulePolicy[] = []
  private list = ''

  of(decision: RuleDecision): RulePolicy {
    const { known } = this
    for (let i = 0; i < known.length; i++) {
      const policy = known[i] as RulePolicy
      if (policy.rule !== decision.rule) continue
      if (policy.limit === decision.limit && policy.windowMs === decision.windowMs) return policy
      known[i] = policyOf(decision)
      return known[i] as RulePolicy
    }
    const policy = policyOf(decision)
    known.push(policy)
    return policy
  }

  /** The IETF `RateLimit-Policy` list of stacked rules, remade only when one of its members changes. */
  ietfList(rules: readonly RuleDecision[]): string {
    let same = rules.length === this.listed.length
    const members: RulePolicy[] = []
    for (let i = 0; i < rules.length; i++) {
      members.push(this.of(rules[i] as RuleDecision))
      same &&= members[i] === this.listed[i]
    }
    if (!same) {
      this.listed = members
      this.list = members.map((member) => member.ietf).join(', ')
    }
    return this.list
  }
}

function policyOf(decision: RuleDecision): RulePolicy {
  return new RulePolicy(decision.rule, decision.limit, decision.windowMs, windowSeconds(decision))
}
