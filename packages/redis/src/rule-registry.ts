import { type CompiledRule, isBucket, type Logger, warnEach } from '@sluice/core/store'
import type { StoreClient } from './client'
import { redisKeyPrefix } from './keys'
import registrySource from './lua/rule-registry.lua'

/** How often a store tells Redis again which rules it counts with, in ms. */
export const REGISTRY_REFRESH_MS = 30_000
// An entry lasts this many refresh periods: a store that stopped (or changed its limits) is forgotten after that,
// and one refresh lost on the way (a slow network, a failover) does not make a live store look gone.
const ENTRY_LASTS_REFRESHES = 3
// After a failed registration (Redis down, a store bound before its client connected), the next comes after this
// long, doubling up to the refresh period.
const FIRST_RETRY_MS = 1000
// Key spaces a store registers at most: a store bound by limiters built per request, each with its own prefix,
// must not grow without bound (the first ones are still checked).
const MAX_KEY_SPACES = 1000

/**
 * What a rule counts with, beyond its key space (`prefix:name:algorithm`): every parameter that changes how its state
 * is read or charged, in one short canonical string. Two stores whose rules count in one key space with different
 * fingerprints count each other's requests against their own limits.
 *
 * @example
 * fingerprintOf(createLimiter({ algorithm: 'fixed-window', limit: 100, window: '1m' }).rules[0])
 * // 'limit=100;windowMs=60000'
 */
export function fingerprintOf(rule: CompiledRule): string {
  const parts = [`limit=${rule.limit}`]
  if (rule.calendar !== undefined) {
    parts.push(`period=${rule.calendar.period}`, `timeZone=${rule.calendar.timeZone}`)
  } else if (isBucket(rule.algorithm)) {
    // The rate's fraction as the rule holds it (see isBucket: it says how a stored state reads).
    parts.push(`rate=${rule.rateNumerator}/${rule.rateDenominator}ms`)
  } else {
    parts.push(`windowMs=${rule.windowMs}`)
  }
  if (rule.blockMs > 0) parts.push(`blockMs=${rule.blockMs}`)
  return parts.join(';')
}

/** One key space of this store: its registry key and what this store counts in it. */
interface KeySpace {
  readonly rule: CompiledRule
  readonly registryKey: string
  readonly fingerprints: Set<string>
  reported: boolean
}

/**
 * Tells Redis which rules a store counts with, per key space, and warns once per key space when another store counts
 * in it with other parameters: two processes (or two RedisStores in one) whose limiters share a prefix, rule name and
 * algorithm but not their limits share one count. Off the decisions' path: one EVAL of `rule-registry.lua` per key
 * space when the store first binds it (so a newcomer notices at once), then one per key space every refresh period
 * (so the store that was there first notices at its next refresh). A registration that fails is dropped silently and
 * tried again later: it is no outage, and no decision waits for it.
 *
 * Nothing is sent to a client that is not open: a lazy one (ioredis `lazyConnect`) is asked once a decision opened it.
 * The timer is unref'd, stops when the store is closed or its client was closed, and holds the registry only weakly,
 * so a store dropped without `close()` stops refreshing once it is collected.
 *
 * @example
 * const registry = new RuleRegistry(client, logger)
 * registry.register(limiter.rules) // in bind
 */
export class RuleRegistry {
  private readonly keySpaces = new Map<string, KeySpace>()
  private readonly entryLastsMs: number
  private timer: ReturnType<typeof setTimeout> | undefined
  private refreshing = false
  private retryMs = FIRST_RETRY_MS
  /** Whether Redis answered a registration once: before that, a client that looks closed may not be connected yet. */
  private answered = false
  private stopped = false

  constructor(
    private readonly client: Pick<StoreClient, 'eval' | 'isOpen'>,
    private readonly logger: Logger,
    private readonly refreshMs = REGISTRY_REFRESH_MS,
  ) {
    this.entryLastsMs = ENTRY_LASTS_REFRESHES * refreshMs
  }

  /** Registers the rules of one binding: those new to this store at once, all of them again every refresh. */
  register(rules: readonly CompiledRule[]): void {
    if (this.stopped) return
    const added: KeySpace[] = []
    for (const rule of rules) {
      let keySpace = this.keySpaces.get(rule.keySpace)
      if (keySpace === undefined) {
        if (this.keySpaces.size >= MAX_KEY_SPACES) continue
        keySpace = { rule, registryKey: `${redisKeyPrefix(rule)}~rules`, fingerprints: new Set(), reported: false }
        this.keySpaces.set(rule.keySpace, keySpace)
      }
      const fingerprint = fingerprintOf(rule)
      if (keySpace.fingerprints.has(fingerprint)) continue
      keySpace.fingerprints.add(fingerprint)
      if (!added.includes(keySpace)) added.push(keySpace)
    }
    if (this.timer === undefined && !this.refreshing) this.schedule(this.refreshMs)
    if (added.length === 0) return
    // Sent now, not on a later turn: on the store's connection it goes before anything its caller sends next.
    if (this.client.isOpen()) void this.send(added).then((ok) => ok || this.retrySoon())
    else this.retrySoon()
  }

  /** Stops refreshing, for good (the store was closed). */
  stop(): void {
    this.stopped = true
    clearTimeout(this.timer)
    this.timer = undefined
  }

  private schedule(delayMs: number): void {
    clearTimeout(this.timer)
    // Only a weak reference: the pending timer alone must not keep a dropped store alive.
    const registry = new WeakRef(this)
    this.timer = setTimeout(() => void registry.deref()?.refresh(), delayMs)
    this.timer.unref()
  }

  private retrySoon(): void {
    if (this.stopped || this.refreshing) return
    this.schedule(Math.min(this.retryMs, this.refreshMs))
    this.retryMs = Math.min(2 * this.retryMs, this.refreshMs)
  }

  private async refresh(): Promise<void> {
    this.timer = undefined
    if (this.stopped || this.refreshing) return
    if (!this.client.isOpen()) {
      // Closed after it answered: nothing more to ask (a later bind starts the timer again, should it reconnect).
      // Not opened yet (a lazy client): ask again later, without connecting it.
      if (!this.answered) this.retrySoon()
      return
    }
    this.refreshing = true
    const ok = await this.send([...this.keySpaces.values()])
    this.refreshing = false
    if (this.stopped) return
    if (ok) {
      this.retryMs = FIRST_RETRY_MS
      this.schedule(this.refreshMs)
    } else {
      this.retrySoon()
    }
  }

  /** One registration per key space; whether every one was answered. Never rejects. */
  private async send(keySpaces: readonly KeySpace[]): Promise<boolean> {
    const answers = await Promise.allSettled(
      keySpaces.map((keySpace) =>
        call(() =>
          this.client.eval(registrySource, 1, keySpace.registryKey, this.entryLastsMs, ...keySpace.fingerprints),
        ),
      ),
    )
    let ok = true
    answers.forEach((answer, i) => {
      if (answer.status === 'rejected') {
        ok = false
        return
      }
      try {
        this.compare(keySpaces[i] as KeySpace, answer.value)
      } catch {
        // A logger that throws: its warning is lost, but no promise of the store's goes unhandled.
      }
    })
    if (ok) this.answered = true
    return ok
  }

  /** Warns, once per key space, when the registry answered fingerprints other than this store's. */
  private compare(keySpace: KeySpace, others: unknown): void {
    if (keySpace.reported || !Array.isArray(others) || others.length === 0) return
    keySpace.reported = true
    const { rule } = keySpace
    warnEach(
      this.logger,
      'SLUICE_REDIS_RULE_MISMATCH',
      `sluice: another RedisStore (in another process, or another store in this one) counts under ` +
        `"${rule.prefix}:${rule.name}" (${rule.algorithm}) in Redis with other parameters: it has ` +
        `${others.map(String).join(' and ')}, this store ${[...keySpace.fingerprints].join(' and ')}. The two share ` +
        'one count, each admitting against its own limits requests the other counted. Give each its own `name` or ' +
        '`prefix`, or the same limits.',
    )
  }
}

/** A client call that throws at once (a closed client) rejects instead. */
function call(send: () => Promise<unknown>): Promise<unknown> {
  try {
    return send()
  } catch (error) {
    return Promise.reject(error)
  }
}
