// Part 6: what publishing events costs. The same limiter path, built three ways in one run: with the event
// check compiled out (the baseline), as shipped with nobody subscribed, and as shipped with a no-op subscriber on
// sluice:decision and sluice:store.
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type * as Core from '@sluice/core'
import { build, type Plugin } from 'esbuild'
import { WINDOW_MS } from './core'
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
  type TargetCheck,
} from './harness'

const CORE_SOURCE = join(__dirname, '..', '..', 'packages', 'core', 'src')
// The one line where the limiter chooses between its quiet path and the observed one.
const CHECK = 'if (!observed()) return this.apply('
const COMPILED_OUT = 'if (true) return this.apply('

/** A bundle of @sluice/core from its sources, with the event check compiled out when `withoutEvents`. */
async function buildCore(directory: string, withoutEvents: boolean, name: string): Promise<typeof Core> {
  const compileOut: Plugin = {
    name: 'compile-out-events',
    setup(esbuild) {
      esbuild.onLoad({ filter: /[\\/]limiter\.ts$/ }, (args) => {
        const source = readFileSync(args.path, 'utf8')
        // Fails loudly when the limiter changes shape, rather than measuring the same build twice.
        if (source.split(CHECK).length !== 2) throw new Error(`bench: limiter.ts no longer has "${CHECK}" once`)
        return { contents: source.replace(CHECK, COMPILED_OUT), loader: 'ts' }
      })
    },
  }
  const outfile = join(directory, `${name}.js`)
  await build({
    entryPoints: [join(CORE_SOURCE, 'index.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    // Folds `if (true) return ...` so the baseline has no trace of the check; the other build gets the same pass.
    minifySyntax: true,
    plugins: withoutEvents ? [compileOut] : [],
    logLevel: 'silent',
  })
  return require(outfile) as typeof Core
}

const TARGET = 0.95
const noop = () => {}

/** Runs part 6 and returns its tables and target check. */
export async function runEvents(): Promise<PartResult> {
  const durationMs = settings.tiny ? 40 : 250
  const rounds = settings.tiny ? { rounds: 2, warmup: 1 } : { rounds: 15, warmup: 3 }
  const directory = mkdtempSync(join(tmpdir(), 'sluice-bench-events-'))
  let results: Map<string, ReturnType<typeof pick>>
  try {
    // Three bundles, so that no build shares its functions' type feedback with another: the subscribed build's
    // observed path must not make the quiet build's `consume` polymorphic, as it never is in a process where nobody
    // subscribes.
    const shipped = await buildCore(directory, false, 'core')
    const shippedForSubscriber = await buildCore(directory, false, 'core-subscribed')
    const baseline = await buildCore(directory, true, 'core-without-events')
    const limiterOf = (core: typeof Core) =>
      core.createLimiter({ limit: 100_000_000, window: WINDOW_MS, store: new core.MemoryStore() })
    const quiet = limiterOf(shipped)
    const compiledOut = limiterOf(baseline)
    const observed = limiterOf(shippedForSubscriber)
    const compiledOutContender: Contender = {
      name: 'events compiled out',
      measure: () => opsPerSecond(durationMs, () => compiledOut.consume('user:1'), 'cpu'),
    }
    // Nobody has subscribed yet in this process: the quiet path as a user who never subscribes runs it (a channel
    // that had subscribers changes its prototype, which the quiet path's check would then also see).
    const quietResults = await alternate(
      [
        compiledOutContender,
        { name: 'no subscriber', measure: () => opsPerSecond(durationMs, () => quiet.consume('user:1'), 'cpu') },
      ],
      rounds,
    )
    const observedResults = await alternate(
      [
        compiledOutContender,
        {
          name: 'no-op subscriber',
          async measure() {
            subscribe('sluice:decision', noop)
            subscribe('sluice:store', noop)
            try {
              return await opsPerSecond(durationMs, () => observed.consume('user:1'), 'cpu')
            } finally {
              unsubscribe('sluice:decision', noop)
              unsubscribe('sluice:store', noop)
            }
          },
        },
      ],
      rounds,
    )
    results = new Map([
      ['events compiled out', pick(quietResults, 'events compiled out')],
      ['no subscriber', pick(quietResults, 'no subscriber')],
      ['no-op subscriber', pick(observedResults, 'no-op subscriber')],
      ['events compiled out (beside the subscriber)', pick(observedResults, 'events compiled out')],
    ])
  } finally {
    rmSync(directory, { recursive: true, force: true })
  }
  const base = pick(results, 'events compiled out')
  const quietRatio = ratio(pick(results, 'no subscriber'), base)
  const observedRatio = ratio(
    pick(results, 'no-op subscriber'),
    pick(results, 'events compiled out (beside the subscriber)'),
  )
  const target: TargetCheck = atLeast(
    'events: no subscriber / events compiled out (same limiter path, same run)',
    quietRatio.median,
    TARGET,
    'ratio',
    'events cost nothing while nobody subscribes',
  )
  return {
    title: '6. Events: what publishing costs',
    method:
      'One limiter path (`createLimiter({ limit, window }).consume(key)`, sliding window, memory store, one hot key) ' +
      'built from the sources of @sluice/core twice with the same esbuild options: as shipped, and with the ' +
      "limiter's one event check (`if (!observed())`) replaced by `true`, so the baseline has no events at all. The " +
      'shipped build runs with nobody subscribed, and with a no-op subscriber on `sluice:decision` and `sluice:store` ' +
      '(every decision then builds its message and times the store; a key is hashed only when a subscriber reads its `keyHash`, and a no-op subscriber reads nothing). Calls per second of CPU ' +
      `time, ${durationMs} ms per round, ${rounds.warmup} warm-up rounds then ${rounds.rounds} measured, alternating. ` +
      'Each build is a bundle of its own, and the quiet build is measured against the baseline before anything ' +
      'subscribes, then the subscribed one against the baseline.',
    tables: [
      {
        title: 'Decisions per second',
        columns: [{ header: 'build', kind: 'text' }, ...RATE_COLUMNS, { header: 'ns/call', kind: 'micros' }],
        rows: ['events compiled out', 'no subscriber', 'no-op subscriber'].map((name) => {
          const s = pick(results, name)
          return [name, s.median, s.min, s.max, 1e9 / s.median]
        }),
      },
      {
        title: 'Over the build with events compiled out',
        columns: [{ header: 'build', kind: 'text' }, ...RATIO_COLUMNS],
        rows: [
          ['no subscriber', quietRatio.median, quietRatio.min, quietRatio.max, target.target, mark(target)],
          ['no-op subscriber', observedRatio.median, observedRatio.min, observedRatio.max, '', ''],
        ],
      },
    ],
    targets: [target],
  }
}
