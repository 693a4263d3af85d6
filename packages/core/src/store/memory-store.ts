import { type Algorithm, algorithms, refunds, type Step } from '../algorithms'
import { type Decision, decisionOf, ruleDecision } from '../rules/decision'
import type { CompiledRule } from '../rules/rules'
import { checkFunction, checkTimerMs, checkWholeNumber } from '../util/checks'
import { evaluateRules } from './evaluate-rules'
import { KeySpaces } from './key-spaces'
import { type Entry, KeyTables, stateAt, type Table, update } from './key-tables'
import { longKeyDigest, MAX_KEPT_KEY_LENGTH } from './long-keys'
import type { BindOptions, BoundStore, Store } from './store'

/**
 * Options of {@link MemoryStore}.
 *
 * @example
 * let now = 0
 * const store = new MemoryStore({ maxKeys: 10_000, clock: () => now })
 */
export interface MemoryStoreOptions {
  /**
   * The most keys held at once; past it the least recently used key is evicted. Default 100 000. A request's own keys
   * (one per stacked rule) are never evicted to make room for each other, so a store smaller than a limiter's stack
   * holds that many.
   */
  maxKeys?: number
  /** The time in milliseconds. Default `Date.now()`; inject one in tests. */
  clock?: () => number
  /** How often expired keys are swept out, in ms (the timer never keeps the process alive). Default 60 000. */
  sweepIntervalMs?: number
}

/**
 * Keeps every key's state in this process, bounded by `maxKeys` with least-recently-used eviction. Expired state
 * is dropped when it is next read and by a periodic sweep on an unref'd timer, so a flood of distinct keys never
 * grows memory past the bound and an idle store does not hold the process open.
 *
 * Each key space (a rule's prefix, name and algorithm) has a table of its own, found once when a limiter binds its
 * rules; a key is looked up by the caller's string as it is, since building a combined key would cost a new string
 * and its hash on every request. A key longer than 256 characters is kept by its SHA-256 instead (see
 * `MAX_KEPT_KEY_LENGTH`), so that `maxKeys` bounds the store's memory and not only its count of keys.
 *
 * @example
 * const store = new MemoryStore({ maxKeys: 50_000 })
 * const limiter = createLimiter({ limit: 10, window: '1s', store })
 */
export class MemoryStore implements Store {
  readonly maxKeys: number
  private readonly tables: KeyTables
  private readonly keySpaces = new KeySpaces()

  constructor(options: MemoryStoreOptions = {}) {
    const { maxKeys = 100_000, clock = Date.now, sweepIntervalMs = 60_000 } = options
    this.maxKeys = checkWholeNumber(maxKeys, 'maxKeys')
    checkFunction(clock, 'clock')
    this.tables = new KeyTables(maxKeys, clock, checkTimerMs(sweepIntervalMs, 'sweepIntervalMs'))
  }

  /** How many keys the store holds now (expired ones included until they are swept). */
  get size(): number {
    return this.tables.size
  }

  bind(rules: readonly CompiledRule[], options: BindOptions = {}): BoundStore {
    this.keySpaces.claim(rules, options)
    return new MemoryBinding(rules, this.tables)
  }

  /** Drops every expired key now (the sweep timer does this periodically). */
  sweep(): void {
    this.tables.sweep()
  }

  /** Forgets every key and stops the sweep timer. */
  clear(): void {
    this.tables.clear()
  }
}

class MemoryBinding implements BoundStore {
  private readonly keyTables: readonly Table[]
  /** Per rule, the keys longer than MAX_KEPT_KEY_LENGTH, by their digest: apart, so no short key can meet one. */
  private readonly longKeyTables: readonly Table[]
  /** Per rule with a `block`, the tables of its keys' block ends, short and long (undefined for a rule without). */
  private readonly blockTables: readonly (Table | undefined)[]
  private readonly longBlockTables: readonly (Table | undefined)[]
  /** One rule without a block: all there is to the common case. */
  private readonly simple: boolean
  /** Whether any rule has a `block`: worked out once, not on every request. */
  private readonly anyBlock: boolean
  /** The first rule, its tables and its algorithm: all there is to the common case of one rule. */
  private readonly rule: CompiledRule
  private readonly table: Table
  private readonly longKeyTable: Table
  private readonly step: Algorithm<unknown>

  constructor(
    readonly rules: readonly CompiledRule[],
    private readonly tables: KeyTables,
  ) {
    this.keyTables = rules.map((rule) => tables.table(rule.keySpace))
    // A key space ends with ':', so this name is never another rule's key space.
    this.longKeyTables = rules.map((rule) => tables.table(`${rule.keySpace}sha256`))
    this.blockTables = rules.map((rule) => (rule.blockMs > 0 ? tables.table(rule.blockKeySpace) : undefined))
    this.longBlockTables = rules.map((rule) =>
      rule.blockMs > 0 ? tables.table(`${rule.blockKeySpace}sha256`) : undefined,
    )
    this.simple = rules.length === 1 && rules[0]?.blockMs === 0
    this.anyBlock = rules.some((rule) => rule.blockMs > 0)
    this.rule = rules[0] as CompiledRule
    this.table = this.keyTables[0] as Table
    this.longKeyTable = this.longKeyTables[0] as Table
    this.step = algorithms[this.rule.algorithm]
  }

  apply(keys: readonly string[], cost: number, charge: boolean): Promise<Decision> {
    return Promise.resolve(this.applyNow(keys, cost, charge))
  }

  applyNow(keys: readonly string[], cost: number, charge: boolean): Decision {
    return this.simple ? this.decideOne(keys[0] as string, cost, charge) : this.decideAll(keys, cost, charge)
  }

  refund(keys: readonly string[], cost: number): Promise<void> {
    const { tables } = this
    const now = Math.floor(tables.clock())
    this.rules.forEach((rule, i) => {
      const table = this.tableOf(i, keys[i] as string)
      const key = keptKey(keys[i] as string)
      const entry = tables.touch(table, key)
      const state = stateAt(entry, now)
      if (state === undefined) return // nothing charged is left to give back
      const step = refunds[rule.algorithm](state, now, cost, rule)
      tables.write(table, key, entry, step.state, now, keepMs(step), this.rules.length)
    })
    return Promise.resolve()
  }

  reset(keys: readonly string[]): Promise<void> {
    this.rules.forEach((_, i) => {
      const key = keys[i] as string
      this.tables.remove(this.tableOf(i, key).get(keptKey(key)))
      // Resetting a key lifts its block too: what an app does after a successful login.
      this.tables.remove(this.blockTableOf(i, key)?.get(keptKey(key)))
    })
    return Promise.resolve()
  }

  /** The common case, one rule: no arrays. */
  private decideOne(key: string, cost: number, charge: boolean): Decision {
    const { tables, rule } = this
    let table = this.table
    if (key.length > MAX_KEPT_KEY_LENGTH) {
      table = this.longKeyTable
      key = longKeyDigest(key)
    }
    const now = Math.floor(tables.clock())
    const entry = tables.touch(table, key)
    const state = stateAt(entry, now)
    const step = this.step(state, now, cost, rule, charge)
    // A new state: charged, or moved back to a clock that stepped back (see `Step`).
    if (step.state !== state) {
      // Nothing can have evicted the entry since it was touched: one rule, no other write in between.
      const keep = keepMs(step)
      if (keep <= 0) tables.remove(entry)
      else if (entry === undefined) tables.insert(table, key, step.state, now + keep)
      else update(entry, step.state, now + keep)
    }
    return ruleDecision(rule, step, cost)
  }

  private decideAll(keys: readonly string[], cost: number, charge: boolean): Decision {
    const { tables, rules } = this
    const now = Math.floor(tables.clock())
    const places: Table[] = []
    const kept: string[] = []
    const found: (Entry | undefined)[] = []
    const states: unknown[] = []
    for (let i = 0; i < rules.length; i++) {
      places.push(this.tableOf(i, keys[i] as string))
      kept.push(keptKey(keys[i] as string))
      const entry = tables.touch(places[i] as Table, kept[i] as string)
      found.push(entry)
      states.push(stateAt(entry, now))
    }
    const blocksBefore = this.blocksOf(keys, now)
    const blocks = blocksBefore?.slice()
    const steps = evaluateRules(rules, states, now, cost, charge, blocks)
    steps.forEach((step, i) => {
      if (step.state === states[i]) return
      tables.write(places[i] as Table, kept[i] as string, found[i], step.state, now, keepMs(step), rules.length)
    })
    if (blocks !== undefined) this.writeBlocks(keys, blocksBefore as (number | undefined)[], blocks, now)
    return decisionOf(rules, steps, cost)
  }

  /** The table rule `i` keeps `key` in: its own, or its table of long keys. */
  private tableOf(i: number, key: string): Table {
    return (key.length > MAX_KEPT_KEY_LENGTH ? this.longKeyTables[i] : this.keyTables[i]) as Table
  }

  /** The table rule `i` keeps the block of `key` in, or undefined when the rule has no block. */
  private blockTableOf(i: number, key: string): Table | undefined {
    return key.length > MAX_KEPT_KEY_LENGTH ? this.longBlockTables[i] : this.blockTables[i]
  }

  /** When the block of each key ends (undefined: none), or undefined when no rule has a block. */
  private blocksOf(keys: readonly string[], now: number): (number | undefined)[] | undefined {
    if (!this.anyBlock) return undefined
    return this.rules.map((_, i) => {
      const key = keys[i] as string
      const table = this.blockTableOf(i, key)
      const entry = table === undefined ? undefined : this.tables.touch(table, keptKey(key))
      return stateAt(entry, now) as number | undefined
    })
  }

  /** Stores the blocks this request started: evaluateRules wrote their ends over what was read. */
  private writeBlocks(
    keys: readonly string[],
    before: readonly (number | undefined)[],
    after: readonly (number | undefined)[],
    now: number,
  ) {
    after.forEach((until, i) => {
      if (until === before[i] || until === undefined) return
      const table = this.blockTableOf(i, keys[i] as string) as Table
      const key = keptKey(keys[i] as string)
      this.tables.write(table, key, table.get(key), until, now, until - now, this.rules.length)
    })
  }
}

/**
 * How long a step's state is kept: until the key is back to its full allowance, and while the key's time is ahead of
 * the clock (it stepped back) that much longer, so that its counts are still there if the clock comes back (see
 * `keyTime`). Nothing, for a state that is already a new key's.
 */
function keepMs(step: Step<unknown>): number {
  return step.resetMs <= 0 ? 0 : step.resetMs + (step.aheadMs ?? 0)
}

/** What a key is kept by: itself, or the digest of a long key (see MAX_KEPT_KEY_LENGTH). */
function keptKey(key: string): string {
  return key.length > MAX_KEPT_KEY_LENGTH ? longKeyDigest(key) : key
}
