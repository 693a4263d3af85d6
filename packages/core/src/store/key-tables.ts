import { unrefTimer } from '../runtime/builtins'

/**
 * One key's state, and its place in the recency list (oldest at `head`, newest at `tail`). A class, not a literal:
 * see `algorithms/step.ts`.
 */
export class Entry {
  older: Entry | undefined = undefined
  newer: Entry | undefined = undefined

  constructor(
    readonly key: string,
    /** The key space's table the entry lives in. */
    readonly table: Table,
    public state: unknown,
    /** When the state becomes the same as a new key's, so it can be dropped. */
    public expiresAt: number,
  ) {}
}

/** One key space's entries, by the caller's key string as it is. */
export type Table = Map<string, Entry>

/**
 * The entry's state as the algorithms see it: none for a missing or expired key. An expired state, once seen, is
 * gone for good, as Redis deletes an expired key: if the clock then stepped back it must not come back to life.
 */
export function stateAt(entry: Entry | undefined, now: number): unknown {
  if (entry === undefined) return undefined
  if (entry.expiresAt <= now) entry.state = undefined
  return entry.state
}

/** Puts a new state in an entry that is in its table. */
export function update(entry: Entry, state: unknown, expiresAt: number): void {
  entry.state = state
  entry.expiresAt = expiresAt
}

/**
 * The memory store's state: one table per key space, bounded by `maxKeys` across all of them with exact
 * least-recently-used eviction. The entries form one doubly linked list, so finding the oldest and moving a key to
 * the young end are a few pointer writes. (A Map's own insertion order is not used: after many deletions, finding
 * its first entry means skipping every deleted slot.) Expired entries are swept by an unref'd timer, running only
 * while there are entries.
 */
export class KeyTables {
  private readonly tables = new Map<string, Table>()
  private count = 0
  private head: Entry | undefined
  private tail: Entry | undefined
  private sweeper: ReturnType<typeof setInterval> | undefined

  constructor(
    readonly maxKeys: number,
    /** The time in ms (the store's clock, possibly fractional: readers floor it). */
    readonly clock: () => number,
    private readonly sweepIntervalMs: number,
  ) {}

  get size(): number {
    return this.count
  }

  /** The table of a key space; bindings of the same key space share it, and so share their counts. */
  table(keySpace: string): Table {
    let table = this.tables.get(keySpace)
    if (table === undefined) {
      table = new Map()
      this.tables.set(keySpace, table)
    }
    return table
  }

  /**
   * Finds a key's entry and makes it the most recently used. An expired entry is returned too: its state counts as
   * a new key's (see `stateAt`), and reusing its slot spares the map a delete and an insert.
   */
  touch(table: Table, key: string): Entry | undefined {
    const entry = table.get(key)
    if (entry === undefined) return undefined
    if (entry !== this.tail) {
      this.unlink(entry)
      this.append(entry)
    }
    return entry
  }

  /**
   * Writes a key's state, a new key's again in `resetMs`, for a request of `keep` keys that found `entry` earlier;
   * inserts it again if it was evicted since. A state with no time left is dropped, as Redis deletes it: kept, it
   * would come back to life if the clock stepped back.
   */
  write(
    table: Table,
    key: string,
    entry: Entry | undefined,
    state: unknown,
    now: number,
    resetMs: number,
    keep: number,
  ): void {
    const found = entry !== undefined && table.get(key) === entry
    if (resetMs <= 0) this.remove(found ? entry : undefined)
    else if (found) update(entry, state, now + resetMs)
    else this.insert(table, key, state, now + resetMs, keep)
  }

  /**
   * Adds a key as the most recently used, then evicts the least recently used past `maxKeys`, but never the request's
   * own `keep` keys, which are the most recent (touched or added by it). A request that evicted its own keys (stacked
   * rules over a small `maxKeys`) would find nothing counted the next time, and be admitted every time.
   */
  insert(table: Table, key: string, state: unknown, expiresAt: number, keep = 1): void {
    const created = new Entry(key, table, state, expiresAt)
    table.set(key, created)
    this.count++
    this.append(created)
    while (this.count > this.maxKeys && this.count > keep) this.remove(this.head)
    if (this.sweeper === undefined) {
      this.sweeper = setInterval(() => this.sweep(), this.sweepIntervalMs)
      unrefTimer(this.sweeper)
    }
  }

  /** Drops an entry read from its table in the same step (every caller's is), or nothing for undefined. */
  remove(entry: Entry | undefined): void {
    if (entry === undefined) return
    entry.table.delete(entry.key)
    this.count--
    this.unlink(entry)
  }

  /** Drops every expired entry; stops the timer once nothing is left. */
  sweep(): void {
    const now = Math.floor(this.clock())
    for (const table of this.tables.values()) {
      for (const entry of table.values()) if (entry.expiresAt <= now) this.remove(entry)
    }
    if (this.count === 0) this.stopSweeper()
  }

  /** Forgets every entry (the tables stay, since bindings hold them) and stops the sweep timer. */
  clear(): void {
    for (const table of this.tables.values()) table.clear()
    this.count = 0
    this.head = undefined
    this.tail = undefined
    this.stopSweeper()
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
