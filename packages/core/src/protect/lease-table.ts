import { describe, InvalidOptionError } from '../errors'

/**
 * Where a concurrency limiter's leases live, compiled once per limiter: `keys[i]` of a call are counted against
 * `limits[i]`. Two limiters with the same `prefix` and `name` on one store share their leases.
 *
 * @example
 * const scope: LeaseScope = { prefix: 'sluice', name: 'uploads', limits: [10, 100], leaseMs: 30_000, global: true }
 */
export interface LeaseScope {
  readonly prefix: string
  readonly name: string
  /** The limit per key, then the global limit, as configured (one or both). */
  readonly limits: readonly number[]
  /** Whether the last limit is a global one (counted under one key for all). */
  readonly global: boolean
  /** How long a lease lasts without renewal, in ms. */
  readonly leaseMs: number
}

/**
 * What a store answers to an acquire: whether every limit had room (then the holder holds a lease in each), and
 * the leases held now in each table (after this one when allowed).
 *
 * @example
 * const outcome: LeaseOutcome = { allowed: false, inFlight: [10, 57] }
 */
export interface LeaseOutcome {
  readonly allowed: boolean
  readonly inFlight: readonly number[]
}

/**
 * Holds concurrency leases: a lease per request in flight, per table (the key's and the global one), each
 * expiring `leaseMs` after it was taken or last renewed, so the leases of a process that died come back on their
 * own. `MemoryLeaseStore` is the default; `RedisLeaseStore` from `@sluice/redis` shares them between instances.
 * `tables[i]` names the table `scope.limits[i]` counts (the key, or the global table).
 *
 * @example
 * const store: LeaseStore = new MemoryLeaseStore()
 */
export interface LeaseStore {
  /** Takes a lease for `holder` in every table if each has fewer than its limit, all or nothing. */
  acquire(scope: LeaseScope, key: string, holder: string): LeaseOutcome | Promise<LeaseOutcome>
  /** Extends the leases of `holders` (those still held) to `leaseMs` from now. */
  renew(scope: LeaseScope, key: string, holders: readonly string[]): void | Promise<void>
  /** Gives the holder's leases back. */
  release(scope: LeaseScope, key: string, holder: string): void | Promise<void>
}

/** One table: holder -> the instant (ms) its lease expires. */
export type LeaseTable = Map<string, number>

/**
 * The lease algorithm, as `lease.lua` runs it in Redis line for line: drop the expired leases of a table only when
 * it looks full (a lease that expires at exactly `now` has expired), refuse when any table is at its limit,
 * otherwise take a lease in each.
 *
 * @example
 * acquireLeases([keyTable, globalTable], [10, 100], 'h1', Date.now(), 30_000) // { allowed: true, inFlight: [1, 1] }
 */
export function acquireLeases(
  tables: readonly LeaseTable[],
  limits: readonly number[],
  holder: string,
  now: number,
  leaseMs: number,
): LeaseOutcome {
  const inFlight: number[] = []
  let allowed = true
  for (let i = 0; i < tables.length; i++) {
    const table = tables[i] as LeaseTable
    if (table.size >= (limits[i] as number)) dropExpired(table, now)
    inFlight.push(table.size)
    if (table.size >= (limits[i] as number)) allowed = false
  }
  if (!allowed) return { allowed, inFlight }
  for (let i = 0; i < tables.length; i++) {
    ;(tables[i] as LeaseTable).set(holder, now + leaseMs)
    inFlight[i] = (inFlight[i] as number) + 1
  }
  return { allowed, inFlight }
}

function dropExpired(table: LeaseTable, now: number): void {
  for (const [holder, expiresAt] of table) if (expiresAt <= now) table.delete(holder)
}

/**
 * Options of {@link MemoryLeaseStore}.
 *
 * @example
 * let now = 0
 * const store = new MemoryLeaseStore({ clock: () => now })
 */
export interface MemoryLeaseStoreOptions {
  /** The time in ms. Default `Date.now()`; inject one in tests. */
  clock?: () => number
}

/**
 * Concurrency leases in this process. Memory is bounded by the requests in flight: a table is dropped as soon as
 * its last lease is released. Leases expire as in Redis, so a slot acquired and never released (a bug) comes back
 * after `lease`, unless its limiter keeps renewing it.
 *
 * @example
 * const inFlight = createConcurrencyLimiter({ limit: 10, store: new MemoryLeaseStore() })
 */
export class MemoryLeaseStore implements LeaseStore {
  private readonly clock: () => number
  /** By `name:prefix` (a name holds no ':'): each key's table, and the global table under `GLOBAL`. */
  private readonly scopes = new Map<string, Map<string | typeof GLOBAL, LeaseTable>>()

  constructor(options: MemoryLeaseStoreOptions = {}) {
    const { clock = () => Date.now() } = options
    if (typeof clock !== 'function') {
      throw new InvalidOptionError('clock', `must be a function returning milliseconds (got ${describe(clock)})`)
    }
    this.clock = clock
  }

  /** Leases held now under `scope` for `key`, per table (expired ones included until they are dropped). */
  held(scope: LeaseScope, key: string): number[] {
    const tables = this.scopes.get(scopeId(scope))
    return tableNames(scope, key).map((name) => tables?.get(name)?.size ?? 0)
  }

  acquire(scope: LeaseScope, key: string, holder: string): LeaseOutcome {
    const id = scopeId(scope)
    let tables = this.scopes.get(id)
    if (tables === undefined) {
      tables = new Map()
      this.scopes.set(id, tables)
    }
    const names = tableNames(scope, key)
    const found = names.map((name) => tables.get(name) ?? new Map<string, number>())
    const outcome = acquireLeases(found, scope.limits, holder, Math.floor(this.clock()), scope.leaseMs)
    names.forEach((name, i) => {
      const table = found[i] as LeaseTable
      // Only tables holding leases are kept: memory stays bounded by the requests in flight.
      if (table.size > 0) tables.set(name, table)
      else tables.delete(name)
    })
    if (tables.size === 0) this.scopes.delete(id)
    return outcome
  }

  renew(scope: LeaseScope, key: string, holders: readonly string[]): void {
    const tables = this.scopes.get(scopeId(scope))
    if (tables === undefined) return
    const expiresAt = Math.floor(this.clock()) + scope.leaseMs
    for (const name of tableNames(scope, key)) {
      const table = tables.get(name)
      if (table === undefined) continue
      for (const holder of holders) if (table.has(holder)) table.set(holder, expiresAt)
    }
  }

  release(scope: LeaseScope, key: string, holder: string): void {
    const id = scopeId(scope)
    const tables = this.scopes.get(id)
    if (tables === undefined) return
    for (const name of tableNames(scope, key)) {
      const table = tables.get(name)
      if (table === undefined) continue
      table.delete(holder)
      if (table.size === 0) tables.delete(name)
    }
    if (tables.size === 0) this.scopes.delete(id)
  }
}

const GLOBAL: unique symbol = Symbol('global')

function scopeId(scope: LeaseScope): string {
  return `${scope.name}:${scope.prefix}`
}

/** The tables a call under `scope` counts, in the order of `scope.limits`. */
function tableNames(scope: LeaseScope, key: string): (string | typeof GLOBAL)[] {
  if (!scope.global) return [key]
  return scope.limits.length === 2 ? [key, GLOBAL] : [GLOBAL]
}
