import { algorithms, refunds } from './algorithms'
import { describe, InvalidOptionError } from './errors'
import type { CompiledRule } from './rules'
import { committed, evaluateRules, type Outcome, type Store } from './store'

/** Options of {@link MemoryStore}. */
export interface MemoryStoreOptions {
  /** The most keys held at once; past it the least recently used key is evicted. Default 100 000. */
  maxKeys?: number
  /** The time in milliseconds. Default `Date.now()`; inject one in tests. */
  clock?: () => number
  /** How often expired keys are swept out, in ms (the timer never keeps the process alive). Default 60 000. */
  sweepIntervalMs?: number
}

/** One key's state, and its place in the recency list (oldest at `head`, newest at `tail`). */
interface Entry {
  readonly key: string
  state: unknown
  /** When the state becomes the same as a new key's, so it can be dropped. */
  expiresAt: number
  older: Entry | undefined
  newer: Entry | undefined
}

/**
 * Keeps every key's state in this process, bounded by `maxKeys` with least-recently-used eviction. Expired state
 * is dropped when it is next read and by a periodic sweep on an unref'd timer, so a flood of distinct keys never
 * grows memory past the bound and an idle store does not hold the process open.
 *
 * Eviction is exact least-recently-used: the entries form a doubly linked list beside the map, so finding the
 * oldest and moving a key to the young end are a few pointer writes. (A Map's own insertion order is not used:
 * after many deletions, finding its first entry means skipping every deleted slot.)
 *
 * @example
 * const store = new MemoryStore({ maxKeys: 50_000 })
 * const limiter = createLimiter({ limit: 10, window: '1s', store })
 */
export class MemoryStore implements Store {
  readonly maxKeys: number
  private readonly clock: () => number
  private readonly sweepIntervalMs: number
  private readonly entries = new Map<string, Entry>()
  private head: Entry | undefined
  private tail: Entry | undefined
  private sweeper: ReturnType<typeof setInterval> | undefined

  constructor(options: MemoryStoreOptions = {}) {
    const { maxKeys = 100_000, clock = () => Date.now(), sweepIntervalMs = 60_000 } = options
    if (!Number.isSafeInteger(maxKeys) || maxKeys < 1) {
      throw new InvalidOptionError('maxKeys', `must be a positive whole number (got ${describe(maxKeys)})`)
    }
    if (typeof clock !== 'function') {
      throw new InvalidOptionError('clock', `must be a function returning milliseconds (got ${describe(clock)})`)
    }
    if (!Number.isSafeInteger(sweepIntervalMs) || sweepIntervalMs < 1) {
      throw new InvalidOptionError(
        'sweepIntervalMs',
        `must be a positive whole number (got ${describe(sweepIntervalMs)})`,
      )
    }
    this.maxKeys = maxKeys
    this.clock = clock
    this.sweepIntervalMs = sweepIntervalMs
  }

  /** How many keys the store holds now (expired ones included until they are swept). */
  get size(): number {
    return this.entries.size
  }

  apply(rules: readonly CompiledRule[], keys: readonly string[], cost: number, charge: boolean): readonly Outcome[] {
    const now = Math.floor(this.clock())
    if (rules.length === 1) {
      // The common case, without the arrays of the general one.
      const rule = rules[0] as CompiledRule
      const storeKey = rule.keyPrefix + (keys[0] as string)
      const entry = this.read(storeKey, now)
      const step = algorithms[rule.algorithm](entry?.state, now, cost, rule, charge)
      if (charge && step.allowed) this.write(storeKey, entry, step.state, now + step.resetMs)
      return [step]
    }
    const storeKeys: string[] = []
    const found: (Entry | undefined)[] = []
    const states: unknown[] = []
    for (let i = 0; i < rules.length; i++) {
      const storeKey = (rules[i] as CompiledRule).keyPrefix + (keys[i] as string)
      const entry = this.read(storeKey, now)
      storeKeys.push(storeKey)
      found.push(entry)
      states.push(entry?.state)
    }
    const steps = evaluateRules(rules, states, now, cost, charge)
    if (committed(steps, charge)) {
      for (let i = 0; i < steps.length; i++) {
        const step = steps[i] as (typeof steps)[number]
        this.write(storeKeys[i] as string, found[i], step.state, now + step.resetMs)
      }
    }
    return steps
  }

  refund(rules: readonly CompiledRule[], keys: readonly string[], cost: number): void {
    const now = Math.floor(this.clock())
    for (let i = 0; i < rules.length; i++) {
      const rule = rules[i] as CompiledRule
      const storeKey = rule.keyPrefix + (keys[i] as string)
      const entry = this.read(storeKey, now)
      if (entry === undefined) continue // nothing charged is left to give back
      const step = refunds[rule.algorithm](entry.state, now, cost, rule)
      this.write(storeKey, entry, step.state, now + step.resetMs)
    }
  }

  reset(rules: readonly CompiledRule[], keys: readonly string[]): void {
    for (let i = 0; i < rules.length; i++) {
      const entry = this.entries.get((rules[i] as CompiledRule).keyPrefix + (keys[i] as string))
      if (entry !== undefined) this.remove(entry)
    }
  }

  /** Drops every expired key now (the sweep timer does this periodically). */
  sweep(): void {
    const now = Math.floor(this.clock())
    for (const entry of this.entries.values()) if (entry.expiresAt <= now) this.remove(entry)
    if (this.entries.size === 0) this.stopSweeper()
  }

  /** Forgets every key and stops the sweep timer. */
  clear(): void {
    this.entries.clear()
    this.head = undefined
    this.tail = undefined
    this.stopSweeper()
  }

  private read(storeKey: string, now: number): Entry | undefined {
    const entry = this.entries.get(storeKey)
    if (entry === undefined) return undefined
    if (entry.expiresAt <= now) {
      this.remove(entry)
      return undefined
    }
    if (entry !== this.tail) {
      this.unlink(entry)
      this.append(entry)
    }
    return entry
  }

  private write(storeKey: string, entry: Entry | undefined, state: unknown, expiresAt: number): void {
    if (entry !== undefined && this.entries.get(storeKey) === entry) {
      entry.state = state
      entry.expiresAt = expiresAt
      return
    }
    if (this.entries.size >= this.maxKeys && this.head !== undefined) this.remove(this.head)
    const created: Entry = { key: storeKey, state, expiresAt, older: undefined, newer: undefined }
    this.entries.set(storeKey, created)
    this.append(created)
    if (this.sweeper === undefined) {
      this.sweeper = setInterval(() => this.sweep(), this.sweepIntervalMs)
      this.sweeper.unref()
    }
  }

  private remove(entry: Entry): void {
    this.entries.delete(entry.key)
    this.unlink(entry)
  }

  private unlink(entry: Entry): void {
    if (entry.older === undefined) this.head = entry.newer
    else entry.older.newer = entry.newer
    if (entry.newer === undefined) this.tail = entry.older
    else entry.newer.older = entry.older
    entry.older = undefined
    entry.newer = undefined
  }

  private append(entry: Entry): void {
    entry.older = this.tail
    if (this.tail === undefined) this.head = entry
    else this.tail.newer = entry
    this.tail = entry
  }

  private stopSweeper(): void {
    if (this.sweeper !== undefined) clearInterval(this.sweeper)
    this.sweeper = undefined
  }
}
