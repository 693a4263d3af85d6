/**
 * The warnings Sluice logs, each under a stable code. The code is the anchor of its section in
 * docs/diagnostics.md (`#sluice_forwarded_untrusted`), which says what it means and what to do; a logger can filter
 * on it, and `SLUICE_SILENCE=CODE1,CODE2` in the environment silences those codes. Errors (a store outage) are not
 * here: they are logged once per outage, and every outage matters.
 */
export const DIAGNOSTICS = {
  SLUICE_FORWARDED_UNTRUSTED: 'a request came with X-Forwarded-For from a proxy the framework does not trust',
  SLUICE_PERMISSIVE_TRUST_PROXY: 'the framework trusts every proxy, so a client can choose the address it is keyed by',
  SLUICE_NO_CLIENT_ADDRESS: 'a request came without a client address',
  SLUICE_NOT_AN_ADDRESS: 'the client address the framework reports is not an IP address',
  SLUICE_SHARED_KEY_SPACE: 'two limiters on one store count under one key space',
  SLUICE_REDIS_CLIENT_OPTIONS: 'Redis client options let a call given up on be counted later',
  SLUICE_REDIS_UNAVAILABLE: 'a Redis node is unavailable',
  SLUICE_REDIS_LEASE_STORE_FAILED: 'the Redis lease store failed',
  SLUICE_REDIS_RULE_MISMATCH: 'another RedisStore counts under the same key space with other limits',
} as const

/**
 * A stable code of a warning.
 *
 * @example
 * const code: DiagnosticCode = 'SLUICE_FORWARDED_UNTRUSTED'
 */
export type DiagnosticCode = keyof typeof DIAGNOSTICS

/** Where the docs explain a code, as the repository names it. */
export const DIAGNOSTICS_DOC = 'docs/diagnostics.md'

/**
 * What a warning carries beside its message (the logger's second argument): its code and where it is explained.
 * `console.warn` prints it as `SLUICE_X (see docs/diagnostics.md#sluice_x)`.
 *
 * @example
 * const logger = { warn: (message: string, note?: unknown) => log.warn({ code: (note as Diagnostic).code }, message), error: console.error }
 */
export class Diagnostic {
  readonly docs: string
  constructor(readonly code: DiagnosticCode) {
    this.docs = `${DIAGNOSTICS_DOC}#${code.toLowerCase()}`
  }

  toString(): string {
    return `${this.code} (see ${this.docs})`
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return this.toString()
  }
}

interface Warner {
  warn(message: string, note?: unknown): void
}

// What each logger has heard: a code (with its subject, for the warnings about one key space) is logged once per
// process for each logger, so the default `console` hears each once, and a logger given per limiter hears its own.
const heard = new WeakMap<Warner, Set<string>>()

/**
 * The codes silenced by `SLUICE_SILENCE` (comma-separated), read at each warning: warnings are rare, and a test or
 * an app may set it after Sluice was loaded. Runtimes without `process` silence nothing.
 */
function silenced(code: DiagnosticCode): boolean {
  const list = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.[
    'SLUICE_SILENCE'
  ]
  return list?.split(',').some((name) => name.trim() === code) === true
}

/**
 * Logs a warning under its code each time, unless `SLUICE_SILENCE` names the code: for the warnings that come once
 * per event (a Redis node's outage, each one), which their callers count. Returns whether it logged.
 *
 * @example
 * warnEach(logger, 'SLUICE_REDIS_UNAVAILABLE', `sluice: ${label} is unavailable ...`)
 */
export function warnEach(logger: Warner, code: DiagnosticCode, message: string): boolean {
  if (silenced(code)) return false
  logger.warn(message, new Diagnostic(code))
  return true
}

/**
 * Logs a warning under its code, once per process for each logger (and `subject`, for a warning about one of
 * several things, such as a key space), unless `SLUICE_SILENCE` names the code. Returns whether it logged.
 *
 * @example
 * warnOnce(logger, 'SLUICE_NO_CLIENT_ADDRESS', 'sluice: a request came without a client address ...')
 */
export function warnOnce(logger: Warner, code: DiagnosticCode, message: string, subject = ''): boolean {
  let codes = heard.get(logger)
  const key = subject === '' ? code : `${code} ${subject}`
  if (codes?.has(key) === true || silenced(code)) return false
  if (codes === undefined) {
    codes = new Set()
    heard.set(logger, codes)
  }
  codes.add(key)
  logger.warn(message, new Diagnostic(code))
  return true
}
