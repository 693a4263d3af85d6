// The contract between a limiter and its store: what a store implements, and what the limiter hands it. Types only:
// the engine every store runs is evaluate-rules.ts, the shared-counts warning key-spaces.ts.
import type { Decision } from '../rules/decision'
import type { CompiledRule } from '../rules/rules'
import type { EventKeys } from '../util/key-hash'
import type { Logger } from '../util/logger'

/**
 * What happens when a store cannot decide: `'local'` decides from a per-instance stand-in (RedisStore only),
 * `'open'` admits, `'closed'` refuses (the HTTP adapters answer 503).
 *
 * @example
 * const policy: FailurePolicy = process.env.NODE_ENV === 'production' ? 'local' : 'closed'
 */
export type FailurePolicy = 'local' | 'open' | 'closed'

/**
 * What a limiter tells a store when it binds its rules.
 *
 * @example
 * const bound = store.bind(rules, { logger: console })
 */
export interface BindOptions {
  /** Where the store reports what it notices about this binding (another binding counting in the same key space). */
  readonly logger?: Logger
  /**
   * True when a limiter binds its own rules again with other limits (`withLimits`): the key spaces are the ones it
   * bound first, shared on purpose, so the store must not report them as shared with another limiter.
   */
  readonly variant?: boolean
  /**
   * How the store may show this binding's keys in what it reports (a `StoreKeyError`, a log line): `'hash'` (the
   * default) by their `keyHash` only, `'raw'` as they are. The limiter's `eventKeys` option.
   */
  readonly eventKeys?: EventKeys
}

/**
 * Holds the state of every key. A limiter binds its rules once, at construction, and calls the bound store on every
 * request: whatever depends only on the rules (plans, key prefixes, tables, scripts) is worked out in `bind`.
 * `MemoryStore` is the default; `RedisStore` from `@sluice/redis` shares the state between instances.
 *
 * @example
 * class CountingStore implements Store {
 *   calls = 0
 *   constructor(private readonly inner: Store) {}
 *   bind(rules: readonly CompiledRule[], options?: BindOptions): BoundStore {
 *     const bound = this.inner.bind(rules, options)
 *     return { rules, apply: (keys, cost, charge) => (this.calls++, bound.apply(keys, cost, charge)),
 *       refund: (keys, cost) => bound.refund(keys, cost), reset: (keys) => bound.reset(keys) }
 *   }
 * }
 */
export interface Store {
  bind(rules: readonly CompiledRule[], options?: BindOptions): BoundStore
}

/**
 * A store bound to one limiter's rules. `keys[i]` belongs to `rules[i]`.
 *
 * @example
 * const bound = new MemoryStore().bind(createLimiter({ limit: 5, window: '1s' }).rules)
 * const decision = await bound.apply(['user:42'], 1, true)
 */
export interface BoundStore {
  readonly rules: readonly CompiledRule[]
  /**
   * Applies every rule to its key at one instant, all or nothing: when `charge` is true and every rule admits, each
   * key is charged `cost`; when any rule rejects (or `charge` is false, a peek), no key changes. Answers the
   * Decision, built from the rules' outcomes with `decisionOf`, so a store that decides without I/O costs its caller
   * one promise and no more. `cost` is a positive whole number no larger than any rule's limit. `trace` is given
   * only while someone listens on `sluice:decision`: a store whose answer did not come from its own state (a
   * short-circuit, a fallback) says so in it.
   */
  apply(keys: readonly string[], cost: number, charge: boolean, trace?: DecisionTrace): Promise<Decision>
  /**
   * `apply` without the promise, for a store that decides without I/O (the memory store): the HTTP policies then
   * answer a request in the turn it arrived in. Called only while nobody listens on `sluice:decision`.
   */
  applyNow?(keys: readonly string[], cost: number, charge: boolean): Decision
  /**
   * Gives `cost` back to each key, after a charged request that should not count (see the algorithms' `Refund`).
   * Each key is refunded on its own; a refund never goes below a new key's state.
   */
  refund(keys: readonly string[], cost: number): Promise<void>
  /** Forgets the state of each key. */
  reset(keys: readonly string[]): Promise<void>
}

/**
 * Where a decision came from: `'store'` (the store decided: Redis, or the memory store), `'short-circuit'` (a
 * RedisStore refused a key it already knew to be rejected, without a round trip), `'fallback'` (the store could not
 * decide and its `onError` policy did: the local stand-in, or `'open'`).
 *
 * @example
 * const fromRedis = (event: DecisionEvent) => event.source === 'store'
 */
export type DecisionSource = 'store' | 'short-circuit' | 'fallback'

/**
 * What the limiter hands a store's `apply` while someone listens on `sluice:decision` (and only then): the store
 * marks where its answer came from. A store that leaves it alone reports `'store'`.
 *
 * @example
 * if (trace !== undefined) trace.source = 'short-circuit'
 */
export interface DecisionTrace {
  source: DecisionSource
}
