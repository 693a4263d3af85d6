import { randomId } from '../runtime/builtins'
import { checkDuration, checkObject, checkOptionNames, checkWholeNumber } from '../util/checks'
import type { Duration } from '../util/duration'
import { describe, InvalidOptionError } from '../util/errors'
import { type LeaseScope, type LeaseStore, MemoryLeaseStore } from './lease-table'
import { checkTimers, realTimers, type Timers } from './timers'

/**
 * Options of {@link createConcurrencyLimiter}: a limit per key, a global limit, or both.
 *
 * @example
 * const options: ConcurrencyLimiterOptions = { limit: 10, globalLimit: 200, lease: '30s', store }
 */
export interface ConcurrencyLimiterOptions {
  /** The most requests in flight at once per key. */
  limit?: number
  /** The most requests in flight at once across all keys. */
  globalLimit?: number
  /**
   * How long a slot lasts in a shared store unless renewed; the limiter renews the slots it holds every third of
   * it, so only the slots of a process that died expire. At least `'1s'`; default `'30s'`.
   */
  lease?: Duration
  /** Default: a new {@link MemoryLeaseStore}; `RedisLeaseStore` from `@sluice/redis` shares slots between instances. */
  store?: LeaseStore
  /** The limiter's name in the store. Default `'default'`. */
  name?: string
  /** Put before every store key. Default `'sluice'`. */
  prefix?: string
  /** The clock and timers of the renewals. Default real time. */
  timers?: Timers
}

/**
 * One request's slot: held when `allowed`, until `release()`.
 *
 * @example
 * const slot = await inFlight.acquire('tenant:acme')
 * if (slot.allowed) try { await work() } finally { await slot.release() }
 */
export interface Slot {
  readonly allowed: boolean
  /** Requests in flight for the limit that bound (the key's, or the global one), this one included if allowed. */
  readonly inFlight: number
  /** That limit. */
  readonly limit: number
  /** 0 when allowed; else an estimate of when a slot frees: the mean hold time over the requests in flight. */
  readonly retryAfterMs: number
  /** Gives the slot back. Idempotent: only the first call releases (a refused slot has nothing to give back). */
  release(): Promise<void>
}

/**
 * A concurrency limiter: `createConcurrencyLimiter` returns one.
 *
 * @example
 * const inFlight: ConcurrencyLimiter = createConcurrencyLimiter({ limit: 30 })
 * console.log(inFlight.held) // slots this limiter holds now
 */
export interface ConcurrencyLimiter {
  readonly scope: LeaseScope
  readonly store: LeaseStore
  /** Slots this limiter holds now (in this process). */
  readonly held: number
  /** Takes a slot for `key` (ignored by a global-only limiter), or reports that every slot is taken. */
  acquire(key?: string): Promise<Slot>
}

const OPTIONS = ['limit', 'globalLimit', 'lease', 'store', 'name', 'prefix', 'timers']
const NAME = /^[A-Za-z0-9_.-]{1,64}$/
// Until a slot has been released, a refused request is told to come back in a second.
const UNKNOWN_HOLD_MS = 1000
const HOLD_WEIGHT = 1 / 32
// Renewed every third of it, a lease of 1 s outlasts a renewal up to 666 ms late (a busy event loop, a slow Redis
// call, a GC pause); a shorter one would lapse under requests that still run whenever the instance is busy.
const MIN_LEASE_MS = 1000
// One id per process, so holders of different instances never collide in a shared store.
const INSTANCE = randomId()
let holderSeq = 0

class Limiter implements ConcurrencyLimiter {
  /** Holders per key, renewed together. */
  private readonly holding = new Map<string, Set<string>>()
  private renewalArmed = false
  private count = 0
  private meanHoldMs = 0

  constructor(
    readonly scope: LeaseScope,
    readonly store: LeaseStore,
    private readonly timers: Timers,
  ) {}

  get held(): number {
    return this.count
  }

  async acquire(key = ''): Promise<Slot> {
    if (typeof key !== 'string')
      throw new TypeError(`sluice: a concurrency key must be a string (got ${describe(key)})`)
    const holder = `${INSTANCE}:${holderSeq++}`
    const { allowed, inFlight } = await this.store.acquire(this.scope, key, holder)
    const { limits } = this.scope
    if (!allowed) {
      const bound = Math.max(
        0,
        limits.findIndex((limit, i) => (inFlight[i] as number) >= limit),
      )
      const count = inFlight[bound] as number
      const holdMs = this.meanHoldMs === 0 ? UNKNOWN_HOLD_MS : this.meanHoldMs
      return {
        allowed,
        inFlight: count,
        limit: limits[bound] as number,
        retryAfterMs: Math.max(1, Math.ceil(holdMs / Math.max(1, count))),
        release: () => Promise.resolve(),
      }
    }
    this.hold(key, holder)
    const startedAt = this.timers.now()
    let released: Promise<void> | undefined
    return {
      allowed,
      inFlight: inFlight[0] as number,
      limit: limits[0] as number,
      retryAfterMs: 0,
      release: () => {
        if (released === undefined) {
          this.unhold(key, holder, this.timers.now() - startedAt)
          released = Promise.resolve(this.store.release(this.scope, key, holder))
        }
        return released
      },
    }
  }

  private hold(key: string, holder: string): void {
    let holders = this.holding.get(key)
    if (holders === undefined) {
      holders = new Set()
      this.holding.set(key, holders)
    }
    holders.add(holder)
    this.count++
    this.armRenewal()
  }

  private unhold(key: string, holder: string, heldMs: number): void {
    this.meanHoldMs = this.meanHoldMs === 0 ? heldMs : this.meanHoldMs + (heldMs - this.meanHoldMs) * HOLD_WEIGHT
    const holders = this.holding.get(key)
    holders?.delete(holder)
    if (holders?.size === 0) this.holding.delete(key)
    // The renewal timer is left to run out rather than cleared: requests that come and go one at a time would
    // otherwise set and clear a timer each.
    this.count--
  }

  private armRenewal(): void {
    if (this.renewalArmed) return
    this.renewalArmed = true
    this.timers.setTimeout(() => {
      this.renewalArmed = false
      this.renew()
    }, this.scope.leaseMs / 3)
  }

  /** Extends every lease this limiter holds, a third of a lease before it would run out. */
  private renew(): void {
    for (const [key, holders] of this.holding) {
      // A failed renewal is not retried: the lease stays valid until it expires, and the next round tries again.
      try {
        const renewed = this.store.renew(this.scope, key, [...holders])
        if (renewed instanceof Promise) renewed.catch(() => undefined)
      } catch {
        // the same: the next round tries again
      }
    }
    if (this.count > 0) this.armRenewal()
  }
}

/**
 * Builds a concurrency limiter: a slot per request in flight, per key and/or globally, held until released. On a
 * shared store a slot is a lease that expires after `lease` unless renewed (the limiter renews the slots it holds),
 * so a crashed instance's slots come back on their own. Invalid options throw an {@link InvalidOptionError}.
 *
 * @example
 * const inFlight = createConcurrencyLimiter({ limit: 30, lease: '30s' })
 * const slot = await inFlight.acquire('tenant:acme')   // { allowed, inFlight, limit, retryAfterMs, release() }
 * if (slot.allowed) try { await work() } finally { await slot.release() }
 */
export function createConcurrencyLimiter(options: ConcurrencyLimiterOptions): ConcurrencyLimiter {
  checkObject(options, 'options')
  checkOptionNames(options, OPTIONS, 'createConcurrencyLimiter', { max: 'limit', maxConcurrent: 'limit' })
  if (options.limit === undefined && options.globalLimit === undefined) {
    throw new InvalidOptionError('limit', 'is required (or `globalLimit`, or both)')
  }
  const limits: number[] = []
  if (options.limit !== undefined) limits.push(checkWholeNumber(options.limit, 'limit'))
  if (options.globalLimit !== undefined) limits.push(checkWholeNumber(options.globalLimit, 'globalLimit'))
  const name = options.name ?? 'default'
  if (typeof name !== 'string' || !NAME.test(name)) {
    throw new InvalidOptionError('name', `must be 1 to 64 letters, digits, '_', '.' or '-' (got ${describe(name)})`)
  }
  const prefix = options.prefix ?? 'sluice'
  if (typeof prefix !== 'string' || prefix.length === 0) {
    throw new InvalidOptionError('prefix', `must be a non-empty string (got ${describe(prefix)})`)
  }
  // `??` has already replaced a null store by the default; anything else must have the three methods.
  const store = options.store ?? new MemoryLeaseStore()
  if (!(['acquire', 'renew', 'release'] as const).every((method) => typeof store[method] === 'function')) {
    throw new InvalidOptionError(
      'store',
      `must be a lease store with acquire, renew and release (got ${describe(store)})`,
    )
  }
  checkTimers(options.timers)
  const leaseMs = checkDuration(options.lease, 'lease', '30s')
  if (leaseMs < MIN_LEASE_MS) {
    throw new InvalidOptionError(
      'lease',
      `must be at least '1s', so that renewals every third of it keep up on a busy instance (got ${describe(options.lease)})`,
    )
  }
  const scope: LeaseScope = { prefix, name, limits, global: options.globalLimit !== undefined, leaseMs }
  return new Limiter(scope, store, options.timers ?? realTimers)
}
