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
 * Holds concurrency leases: a lease per request in flight, per table (the key's and the global one). In a shared
 * store each expires `leaseMs` after it was taken or last renewed, so the leases of a process that died come back on
 * their own. `MemoryLeaseStore` is the default; `RedisLeaseStore` from `@sluice/redis` shares them between instances.
 * `tables[i]` names the table `scope.limits[i]` counts (the key, or the global table).
 *
 * @example
 * const store: LeaseStore = new MemoryLeaseStore()
 */
export interface LeaseStore {
  /** Takes a lease for `holder` in every table if each has fewer than its limit, all or nothing. */
  acquire(scope: LeaseScope, key: string, holder: string): LeaseOutcome | Promise<LeaseOutcome>
  /**
   * Extends the leases of `holders`, all still held by the caller, to `leaseMs` from now. A shared store takes a
   * lease it lost (Redis restarted, was flushed, failed over or evicted it) again, even in a full table: the request
   * still runs, so it is counted, and nobody else is admitted until the leases held are back below the limit.
   */
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

/**
 * A renewal, as `lease.lua` runs it: every holder's lease in every table runs to `now + leaseMs`, and one that is
 * missing (lost by the store) is taken again whether or not the table has room. Returns how many were taken again.
 *
 * @example
 * renewLeases([keyTable], ['h1'], Date.now(), 30_000) // 0: h1's lease was there, and now runs 30 s more
 */
export function renewLeases(
  tables: readonly LeaseTable[],
  holders: readonly string[],
  now: number,
  leaseMs: number,
): number {
  let retaken = 0
  for (const table of tables) {
    for (const holder of holders) {
      if (!table.has(holder)) retaken++
      table.set(holder, now + leaseMs)
    }
  }
  return retaken
}

function dropExpired(table: LeaseTable, now: number): void {
  for (const [holder, expiresAt] of table) if (expiresAt <= now) table.delete(holder)
}

/**
 * Concurrency leases in this process. Memory is bounded by the requests in flight: a table is dropped as soon as
 * its last lease is released. A lease here never expires: the store lives in the process of the limiter that holds
 * the lease, so there is no crashed holder to wait for, and only `release()` gives a slot back. (An expiry would
 * give a slot away whenever the event loop was blocked for longer than a lease, while its request still ran.)
 *
 * @example
 * const inFlight = createConcurrencyLimiter({ limit: 10, store: new MemoryLeaseStore() })
 */
export class MemoryLeaseStore implements LeaseStore {
  /** By `name:prefix` (a name holds no ':'): each key's table, and the global table under `GLOBAL`. */
  private readonly scopes = new Map<string, Map<string | typeof GLOBAL, LeaseTable>>()

  /** Leases held now under `scope` for `key`, per table. */
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
    // Leases that run to Infinity: none is ever dropped as expired.
    const outcome = acquireLeases(found, scope.limits, holder, 0, Number.POSITIVE_INFINITY)
    names.forEach((name, i) => {
      const table = found[i] as LeaseTable
      // Only tables holding leases are kept: memory stays bounded by the requests in flight.
      if (table.size > 0) tables.set(name, table)
      else tables.delete(name)
    })
    if (tables.size === 0) this.scopes.delete(id)
    return outcome
  }

  /** Nothing to do: a lease here neither expires nor gets lost, and a released one is not taken back. */
  renew(_scope: LeaseScope, _key: string, _holders: readonly string[]): void {}

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
