// Part 1: decisions per second in one process, memory store, against rate-limiter-flexible's RateLimiterMemory,
// express-rate-limit's MemoryStore and a floor (one Map get and one Map set behind one await).
import { type AlgorithmName, createLimiter, MemoryStore } from '@sluice/core'
import { MemoryStore as ExpressMemoryStore, type Options as ExpressRateLimitOptions } from 'express-rate-limit'
import { RateLimiterMemory } from 'rate-limiter-flexible'
import { runMixes } from './core-mix'
import {
  alternate,
  atLeast,
  type Contender,
  mark,
  opsPerSecond,
  type PartResult,
  pick,
  RATE_COLUMNS,
  RATIO_COLUMNS,
  ratio,
  settings,
  type Table,
  type TargetCheck,
} from './harness'

export const ALGORITHMS: readonly AlgorithmName[] = [
  'fixed-window',
  'sliding-window',
  'sliding-log',
  'token-bucket',
  'leaky-bucket',
]

/**
 * The limits every contender gets, per key, for one day: high enough that nothing is rejected (a hot key takes at
 * most a few tens of millions of calls in one table, each of 10 000 keys a few thousand), and low enough that a
 * bucket refills more slowly than its key is hit (1e8 / day is 1157 per second for the hot key; 1e6 / day is 11.6 per
 * second, while each of 10 000 keys is hit tens of times a second). So buckets drain and are never full: their state
 * never expires and is never recreated, as in a real service. (The sliding window's exact count needs
 * (limit + 1) * windowMs to stay below 2^53, which caps the limit for a one-day window near 1e8.)
 */
export const WINDOW_MS = 86_400_000

const KEY_SETS = [
  { label: 'one hot key', count: 1, limit: 100_000_000 },
  { label: '10 000 keys', count: 10_000, limit: 1_000_000 },
]

/** Not contenders: the floor with what every Sluice call adds, to show where the time between them goes. */
const REFERENCES = ['floor + Date.now()', 'floor + Date.now() + result object'] as const

/**
 * Sluice's rate over rate-limiter-flexible's, which keeps a state per key and reads the clock per call as Sluice does.
 * The rows over express-rate-limit and the floor are references: 3x rate-limiter-flexible, 1.5x express-rate-limit
 * and 0.5x the floor are beyond any limiter that reads the clock and returns a fresh Decision per call (analysis.md).
 */
const OVER_RATE_LIMITER_FLEXIBLE = 1
const WHY_LEVEL = 'no slower than rate-limiter-flexible, which does the same job in memory'

/** The least any in-memory limiter does: one Map get, one Map set and one await per call. */
function floor(): (key: string) => Promise<void> {
  const counts = new Map<string, number>()
  return async function floor(key: string): Promise<void> {
    counts.set(key, (counts.get(key) ?? 0) + 1)
  }
}

/** The floor plus one clock read: what any limiter that reads the time on every call cannot go below. */
function floorWithClock(): (key: string) => Promise<void> {
  const times = new Map<string, number>()
  return async function floorWithClock(key: string): Promise<void> {
    times.set(key, Math.max(times.get(key) ?? 0, Date.now()))
  }
}

/** The floor, the clock, and a fresh result object of a Decision's ten fields for the caller. */
function floorWithClockAndResult(): (key: string) => Promise<object> {
  const times = new Map<string, number>()
  return async function floorWithClockAndResult(key: string): Promise<object> {
    const now = Date.now()
    const last = times.get(key) ?? 0
    times.set(key, Math.max(last, now))
    return {
      allowed: true,
      rule: 'default',
      limit: 1,
      windowMs: 1,
      remaining: now - last,
      resetMs: 0,
      retryAfterMs: 0,
      delayMs: 0,
      cost: 1,
      costExceedsCapacity: false,
    }
  }
}

/** Nanoseconds per call of Date.now() and of awaiting an already resolved promise, on this machine now. */
export async function machineCosts(): Promise<{ clockNs: number; awaitNs: number }> {
  const n = settings.tiny ? 100_000 : 5_000_000
  let sink = 0
  let start = performance.now()
  for (let i = 0; i < n; i++) sink += Date.now()
  const clockNs = ((performance.now() - start) * 1e6) / n
  const resolved = Promise.resolve(1)
  start = performance.now()
  for (let i = 0; i < n; i++) sink += await resolved
  const awaitNs = ((performance.now() - start) * 1e6) / n
  if (sink === 0) throw new Error('unreachable: keeps the loops from being optimized away')
  return { clockNs, awaitNs }
}

function contenders(keys: readonly string[], limit: number, durationMs: number): { all: Contender[]; stop(): void } {
  const n = keys.length
  const key = (i: number) => keys[i % n] as string
  const all: Contender[] = ALGORITHMS.map((algorithm) => {
    const limiter = createLimiter({
      algorithm,
      limit,
      window: WINDOW_MS,
      store: new MemoryStore({ maxKeys: 100_000 }),
    })
    return {
      name: `sluice ${algorithm}`,
      measure: () => opsPerSecond(durationMs, (i) => limiter.consume(key(i)), 'cpu'),
    }
  })
  const flexible = new RateLimiterMemory({ points: limit, duration: WINDOW_MS / 1000 })
  all.push({
    name: 'rate-limiter-flexible',
    measure: () => opsPerSecond(durationMs, (i) => flexible.consume(key(i)), 'cpu'),
  })
  const express = new ExpressMemoryStore()
  express.init({ windowMs: WINDOW_MS } as ExpressRateLimitOptions)
  all.push({
    name: 'express-rate-limit',
    measure: () => opsPerSecond(durationMs, (i) => express.increment(key(i)), 'cpu'),
  })
  const base = floor()
  all.push({ name: 'floor', measure: () => opsPerSecond(durationMs, (i) => base(key(i)), 'cpu') })
  const clocked = floorWithClock()
  all.push({ name: REFERENCES[0], measure: () => opsPerSecond(durationMs, (i) => clocked(key(i)), 'cpu') })
  const withResult = floorWithClockAndResult()
  all.push({ name: REFERENCES[1], measure: () => opsPerSecond(durationMs, (i) => withResult(key(i)), 'cpu') })
  return { all, stop: () => express.shutdown() }
}

/** Runs part 1 and returns its tables and target checks. */
export async function runCore(): Promise<PartResult> {
  const durationMs = settings.tiny ? 40 : 250
  const rounds = settings.tiny ? { rounds: 2, warmup: 1 } : { rounds: 9, warmup: 2 }
  const tables: Table[] = []
  const targets: TargetCheck[] = []
  for (const { label, count, limit } of KEY_SETS) {
    const keys = Array.from({ length: count }, (_, i) => `user:${i}`)
    const { all, stop } = contenders(keys, limit, durationMs)
    const results = await alternate(all, rounds)
    stop()
    tables.push({
      title: `Decisions per second, ${label}`,
      columns: [{ header: 'contender', kind: 'text' }, ...RATE_COLUMNS, { header: 'ns/call', kind: 'micros' }],
      rows: all.map(({ name }) => {
        const s = pick(results, name)
        return [name, s.median, s.min, s.max, 1e9 / s.median]
      }),
    })
    const rows: (string | number)[][] = []
    for (const algorithm of ALGORITHMS) {
      const sluice = pick(results, `sluice ${algorithm}`)
      for (const peer of ['rate-limiter-flexible', 'express-rate-limit', 'floor']) {
        const r = ratio(sluice, pick(results, peer))
        if (peer !== 'rate-limiter-flexible') {
          rows.push([algorithm, peer, r.median, r.min, r.max, '', ''])
          continue
        }
        const what = `core ${algorithm}, ${label}: sluice / ${peer}`
        const checked = atLeast(what, r.median, OVER_RATE_LIMITER_FLEXIBLE, 'ratio', WHY_LEVEL)
        targets.push(checked)
        rows.push([algorithm, peer, r.median, r.min, r.max, checked.target, mark(checked)])
      }
    }
    tables.push({
      title: `Sluice over each peer, ${label}`,
      columns: [{ header: 'sluice', kind: 'text' }, { header: 'over', kind: 'text' }, ...RATIO_COLUMNS],
      rows,
    })
  }
  const mixes = await runMixes()
  tables.push(...mixes.tables)
  targets.push(...mixes.targets)
  const costs = await machineCosts()
  tables.push({
    title: 'What every call pays on this machine (one run each)',
    columns: [
      { header: 'operation', kind: 'text' },
      { header: 'ns', kind: 'micros' },
    ],
    rows: [
      ['Date.now()', costs.clockNs],
      ['await of a resolved promise', costs.awaitNs],
    ],
  })
  return {
    title: '1. Core decisions per second (memory store, one process)',
    method:
      `Each contender is called in a loop, every call awaited, for ${durationMs} ms per round, and its rate is ` +
      "calls per second of this process's CPU time (process.cpuUsage, user + system): on a shared 2-core machine " +
      'the wall clock also counts the time the process waits while other work runs, and that lands on whichever ' +
      'contender happens to be running; CPU time does not. ' +
      `${rounds.warmup} warm-up rounds, then ${rounds.rounds} measured, alternating (A B C, then C B A). ` +
      'Every limiter allows, per key and per day, 1e8 (one hot key) or 1e6 (10 000 keys): nothing is rejected, ' +
      'and buckets refill more slowly than their keys are hit, so they drain: their state never expires, so it is never ' +
      'recreated. Sluice: ' +
      '`createLimiter({ algorithm, limit, window, store: new MemoryStore() }).consume(key)`; ' +
      'rate-limiter-flexible: `RateLimiterMemory.consume(key)`; express-rate-limit: `MemoryStore.increment(key)` ' +
      '(a fixed-window counter in an unbounded Map); floor: an async function doing one Map get and one Map set. ' +
      'Keys are strings made before the run. Ratios are paired per round (A and B measured side by side), then ' +
      'the median, min and max of those ratios. On this kind of machine Date.now() costs about 40 ns and an awaited ' +
      'promise about 44 ns: every contender pays one awaited promise per call, and every limiter reads the clock ' +
      'once per call; the floor does no clock read, nothing but its one await. Two reference rows (not contenders) ' +
      'add to the floor what every Sluice call must do: read the clock, and return a fresh ten-field result. ' +
      mixes.method,
    tables,
    targets,
  }
}
