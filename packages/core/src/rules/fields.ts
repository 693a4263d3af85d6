// The options of a limiter and of its rules as the runtime checks read them: every field `unknown`, whatever shape of
// options.ts (or JavaScript) gave it. The checks in rules.ts and limiter/rule-sources.ts start from these.

/**
 * Every option of a rule with the type the runtime checks start from: what `compileRule` reads, whatever shape (or
 * JavaScript) gave it.
 */
export interface RuleFields {
  name?: unknown
  algorithm?: unknown
  limit?: unknown
  window?: unknown
  rate?: unknown
  period?: unknown
  timeZone?: unknown
  block?: unknown
}

/** Every option of a limiter, as the runtime checks read it. */
export interface LimiterFields extends RuleFields {
  rules?: unknown
  store?: unknown
  prefix?: unknown
  label?: unknown
  cost?: unknown
  logger?: unknown
  eventKeys?: unknown
}
