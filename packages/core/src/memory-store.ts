import { algorithms, refunds } from './algorithms'
import { describe, InvalidOptionError } from './errors'
import type { CompiledRule } from './rules'
import { committed, evaluateRules, type Outcome, type Store } from './store'

/**
 * Options of {@link MemoryStore}.
 *
 * @example
 * let now = 0
 * const store = new MemoryStore({ maxKeys: 10_000, clock: () => now })
 */
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
  /** The rule's table the entry lives in. */
  readonly table: Map<string, Entry>
  state: unknown
  /** When the state becomes the same as a new key's, so it can be dropped. */
  expiresAt: number
  older: Entry | undefined
  newer: Entry | undefined
}

/** The entry's state as the algorithms see it: none for a missing or expired key. */
function stateAt(entry: Entry | undefined, now: number): unknown {
  return entry === undefined || entry.expiresAt <= now ? undefined : entry.state
}

/** Puts a new state in an entry that is in its table. */
function update(entry: Entry, state: unknown, expiresAt: number): void {
  entry.state = state
  entry.expiresAt = expiresAt
}

/**
 * Keeps every key's state in this process, bounded by `maxKeys` with least-recently-used eviction. Expired state
 * is dropped when it is next read and by a periodic sweep on an unref'd timer, so a flood of distinct keys never
 * grows memory past the bound and an idle store does not hold the process open.
 *
 * Each rule has a table of its own, looked up by the caller's key string as it is: building a combined key would
 * cost a new string and its hash on every request. Eviction is exact least-recently-used across all tables: the
 * entries form one doubly linked list, so finding the oldest and moving a key to the young end are a few pointer
 * writes. (A Map's own insertion order is not used: after many deletions, finding its first entry means skipping
 * every deleted slot.)
 *
 * @example
 * const store = new MemoryStore({ maxKeys: 50_000 })
 * const limiter = createLimiter({ limit: 10, window: '1s', store })
 */
export class MemoryStore implements Store {
  readonly maxKeys: number
  private readonly clock: () => number
  private readonly sweepIntervalMs: number
  /** One table per rule, by the rule's key prefix (prefix, name and algorithm). */
  private readonly tables = new Map<string, Map<string, Entry>>()
  private lastRule: CompiledRule | undefined
  private lastTable: Map<string, Entry> | undefined
  private count = 0
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
    return this.count
  }

  applyOne(rule: CompiledRule, key: string, cost: number, charge: boolean): Outcome {
    const now = Math.floor(this.clock())
    const table = this.tableOf(rule)
    const entry = this.touch(table, key)
    const step = algorithms[rule.algorithm](stateAt(entry, now), now, cost, rule, charge)
    if (charge && step.allowed) {
      // Nothing can have evicted the entry since it was touched: one rule, no other write in between.
      if (entry === undefined) this.insert(table, key, step.state, now + step.resetMs)
      else update(entry, step.state, now + step.resetMs)
    }
    return step
  }

  apply(rules: readonly CompiledRule[], keys: readonly string[], cost: number, charge: boolean): readonly Outcome[] {
    if (rules.length === 1) return [this.applyOne(rules[0] as CompiledRule, keys[0] as string, cost, charge)]
    const now = Math.floor(this.clock())
    const tables: Map<string, Entry>[] = []
    const found: (Entry | undefined)[] = []
    const states: unknown[] = []
    for (let i = 0; i < rules.length; i++) {
      const table = this.tableOf(rules[i] as CompiledRule)
      const entry = this.touch(table, keys[i] as string)
      tables.push(table)
      found.push(entry)
      states.push(stateAt(entry, now))
    }
    const steps = evaluateRules(rules, states, now, cost, charge)
    if (committed(steps, charge)) {
      for (let i = 0; i < steps.length; i++) {
        const step = steps[i] as (typeof steps)[number]
        this.write(tables[i] as Map<string, Entry>, keys[i] as string, found[i], step.state, now + step.resetMs)
      }
    }
    return steps
  }

  refund(rules: readonly CompiledRule[], keys: readonly string[], cost: number): void {
    const now = Math.floor(this.clock())
    for (let i = 0; i < rules.length; i++) {
      const rule = rules[i] as CompiledRule
      const table = this.tableOf(rule)
      const key = keys[i] as string
      const entry = this.touch(table, key)
      const state = stateAt(entry, now)
      if (state === undefined) continue // nothing charged is left to give back
      const step = refunds[rule.algorithm](state, now, cost, rule)
      this.write(table, key, entry, step.state, now + step.resetMs)
    }
  }

  reset(rules: readonly CompiledRule[], keys: readonly string[]): void {
    for (let i = 0; i < rules.length; i++) {
      const entry = this.tables.get((rules[i] as CompiledRule).keyPrefix)?.get(keys[i] as string)
      if (entry !== undefined) this.remove(entry)
    }
  }

  /** Drops every expired key now (the sweep timer does this periodically). */
  sweep(): void {
    const now = Math.floor(this.clock())
    for (const table of this.tables.values()) {
      for (const entry of table.values()) if (entry.expiresAt <= now) this.remove(entry)
    }
    if (this.count === 0) this.stopSweeper()
  }

  /** Forgets every key and stops the sweep timer. */
  clear(): void {
    this.tables.clear()
    this.lastRule = undefined
    this.lastTable = undefined
    this.count = 0
    this.head = undefined
    this.tail = undefined
    this.stopSweeper()
  }

  private tableOf(rule: CompiledRule): Map<string, Entry> {
    if (rule === this.lastRule) return this.lastTable as Map<string, Entry>
    let table = this.tables.get(rule.keyPrefix)
    if (table === undefined) {
      table = new Map()
      this.tables.set(rule.keyPrefix, table)
    }
    this.lastRule = rule
    this.lastTable = table
    return table
  }

  /**
   * Finds a key's entry and makes it the most recently used. An expired entry is returned too: its state counts as
   * a new key's (see `stateAt`), and reusing its slot spares the map a delete and an insert.
   */
  private touch(table: Map<string, Entry>, key: string): Entry | undefined {
    const entry = table.get(key)
    if (entry === undefined) return undefined
    if (entry !== this.tail) {
      this.unlink(entry)
      this.append(entry)
    }
    return entry
  }

  /** Writes a state for a key found earlier in the same request; inserts it again if it was evicted since. */
  private write(table: Map<string, Entry>, key: string, entry: Entry | undefined, state: unknown, expiresAt: number) {
    if (entry !== undefined && table.get(key) === entry) update(entry, state, expiresAt)
    else this.insert(table, key, state, expiresAt)
  }

  private insert(table: Map<string, Entry>, key: string, state: unknown, expiresAt: number): void {
    if (this.count >= this.maxKeys && this.head !== undefined) this.remove(this.head)
    const created: Entry = { key, table, state, expiresAt, older: undefined, newer: undefined }
    table.set(key, created)
    this.count++
    this.append(created)
    if (this.sweeper === undefined) {
      this.sweeper = setInterval(() => this.sweep(), this.sweepIntervalMs)
      this.sweeper.unref()
    }
  }

  private remove(entry: Entry): void {
    if (entry.table.get(entry.key) !== entry) return
    entry.table.delete(entry.key)
    this.count--
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
