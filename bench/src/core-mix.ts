// Part 1, second half: each algorithm against rate-limiter-flexible in a process that uses some of the algorithms
// (only the token bucket and the sliding window, or all five), every call awaited in turn or 1,000 in flight over
// 10 000 keys. Each mix runs in a child process of its own: what V8 optimizes, and how a shared call site or a state
// object's fields are represented, depends on every algorithm the process has run.
import { fork } from 'node:child_process'
import { join } from 'node:path'
import type { AlgorithmName } from '@sluice/core'
import type { MixSamples, Shape } from './core-mix-child'
import { atLeast, mark, RATIO_COLUMNS, ratio, settings, summarize, type Table, type TargetCheck } from './harness'

const MIXES: readonly { label: string; algorithms: readonly AlgorithmName[] }[] = [
  { label: 'token bucket + sliding window', algorithms: ['token-bucket', 'sliding-window'] },
  {
    label: 'all five',
    algorithms: ['fixed-window', 'sliding-window', 'sliding-log', 'token-bucket', 'leaky-bucket'],
  },
]
const SHAPE_ORDER: readonly Shape[] = ['sequential', '1000 in flight']
/**
 * Each algorithm over rate-limiter-flexible in a process that runs several: level with it, as alone. 1.3x was
 * dropped: the shared decision path that every algorithm goes through costs 30 to 60 ns a call once a process runs
 * several, and only a copy of that path per algorithm would win it back (analysis.md).
 */
const TARGET = 1
const WHY = 'no slower than rate-limiter-flexible when a process runs several algorithms'

function runMix(algorithms: readonly AlgorithmName[], durationMs: number, rounds: number, warmup: number) {
  const args = [algorithms.join(','), String(durationMs), String(rounds), String(warmup)]
  const child = fork(join(__dirname, 'core-mix-child.ts'), args, {
    cwd: join(__dirname, '..'),
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  return new Promise<MixSamples>((resolve, reject) => {
    child.once('message', (samples: MixSamples) => resolve(samples))
    child.once('exit', (code) => reject(new Error(`core mix child (${algorithms.join(', ')}) exited with ${code}`)))
  })
}

/** The mixes' tables (rates, and each algorithm over rate-limiter-flexible) and their target checks. */
export async function runMixes(): Promise<{ tables: Table[]; targets: TargetCheck[]; method: string }> {
  const durationMs = settings.tiny ? 30 : 250
  const rounds = settings.tiny ? { rounds: 2, warmup: 1 } : { rounds: 7, warmup: 2 }
  const rateRows: (string | number)[][] = []
  const ratioRows: (string | number)[][] = []
  const targets: TargetCheck[] = []
  for (const { label, algorithms } of MIXES) {
    const samples = await runMix(algorithms, durationMs, rounds.rounds, rounds.warmup)
    for (const shape of SHAPE_ORDER) {
      const of = (name: string) => summarize(samples[shape][name] ?? [])
      const flexible = of('rate-limiter-flexible')
      rateRows.push([label, shape, 'rate-limiter-flexible', flexible.median, flexible.min, flexible.max])
      for (const algorithm of algorithms) {
        const sluice = of(`sluice ${algorithm}`)
        rateRows.push([label, shape, `sluice ${algorithm}`, sluice.median, sluice.min, sluice.max])
        const r = ratio(sluice, flexible)
        const what = `core ${algorithm}, ${shape}, process with ${label}: sluice / rate-limiter-flexible`
        const checked = atLeast(what, r.median, TARGET, 'ratio', WHY)
        targets.push(checked)
        ratioRows.push([label, shape, algorithm, r.median, r.min, r.max, checked.target, mark(checked)])
      }
    }
  }
  const tables: Table[] = [
    {
      title: 'Decisions per second over 10 000 keys, by the algorithms the process uses',
      columns: [
        { header: 'process uses', kind: 'text' },
        { header: 'shape', kind: 'text' },
        { header: 'contender', kind: 'text' },
        { header: 'median /s', kind: 'rate' },
        { header: 'min /s', kind: 'rate' },
        { header: 'max /s', kind: 'rate' },
      ],
      rows: rateRows,
    },
    {
      title: 'Each algorithm over rate-limiter-flexible in the same process, by the algorithms the process uses',
      columns: [
        { header: 'process uses', kind: 'text' },
        { header: 'shape', kind: 'text' },
        { header: 'sluice', kind: 'text' },
        ...RATIO_COLUMNS,
      ],
      rows: ratioRows,
    },
  ]
  const method =
    'The mixes: one child process per set of algorithms (the token bucket and the sliding window only, or all five), ' +
    'each running Sluice with those algorithms (a MemoryStore each) beside rate-limiter-flexible, over 10 000 keys ' +
    '(1e6 per key per day: nothing is rejected), in two shapes: every call awaited in turn, and 1,000 calls in ' +
    `flight (1,000 loops sharing the work). ${durationMs} ms per round, ${rounds.warmup} warm-up rounds and ` +
    `${rounds.rounds} measured, every contender and shape alternating; rates per second of the child's CPU time.`
  return { tables, targets, method }
}
