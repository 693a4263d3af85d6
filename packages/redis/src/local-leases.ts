import { MemoryLeaseStore } from '@sluice/core'
import type { LeaseOutcome, LeaseScope } from '@sluice/core/store'

/** Leases granted here under one scope and key that Redis does not hold yet. */
interface Unwritten {
  readonly scope: LeaseScope
  readonly key: string
  readonly holders: Set<string>
}

/**
 * The slots a `RedisLeaseStore` grants in this instance's memory while Redis is down (`onError: 'local'`), and which
 * of them Redis has not been told about yet. When Redis answers again, those still held are written to it before it
 * decides anything else, so that the fleet counts them: else another instance would be given the same slot.
 *
 * @example
 * const local = new LocalLeases()
 * local.acquire(scope, 'tenant:acme', holder) // during the outage
 * await local.writeTo((scope, key, holders) => renewInRedis(scope, key, holders)) // once Redis answers
 */
export class LocalLeases {
  private readonly store = new MemoryLeaseStore()
  /** By scope and key. */
  private readonly unwritten = new Map<string, Unwritten>()

  /** Whether some slot granted here is still held and not yet in Redis. */
  get pending(): boolean {
    return this.unwritten.size > 0
  }

  acquire(scope: LeaseScope, key: string, holder: string): LeaseOutcome {
    const outcome = this.store.acquire(scope, key, holder)
    if (!outcome.allowed) return outcome
    const id = idOf(scope, key)
    let entry = this.unwritten.get(id)
    if (entry === undefined) {
      entry = { scope, key, holders: new Set() }
      this.unwritten.set(id, entry)
    }
    entry.holders.add(holder)
    return outcome
  }

  release(scope: LeaseScope, key: string, holder: string): void {
    this.store.release(scope, key, holder)
    const id = idOf(scope, key)
    const entry = this.unwritten.get(id)
    entry?.holders.delete(holder)
    if (entry?.holders.size === 0) this.unwritten.delete(id)
  }

  /**
   * Hands every table's unwritten leases to `write` (all tables at once); those it wrote are forgotten here, and
   * the first failure rejects. The leases stay counted in this memory too, until released, for the next outage.
   */
  async writeTo(write: (scope: LeaseScope, key: string, holders: readonly string[]) => Promise<void>): Promise<void> {
    await Promise.all(
      [...this.unwritten].map(async ([id, entry]) => {
        const holders = [...entry.holders]
        await write(entry.scope, entry.key, holders)
        for (const holder of holders) entry.holders.delete(holder)
        // A slot taken again under this table meanwhile has an entry of its own, still to be written.
        if (entry.holders.size === 0 && this.unwritten.get(id) === entry) this.unwritten.delete(id)
      }),
    )
  }
}

function idOf(scope: LeaseScope, key: string): string {
  return JSON.stringify([scope.prefix, scope.name, scope.global, key])
}
