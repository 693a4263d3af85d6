// Part 7: the client's memory per origin. A retry budget and an adaptive throttle keep state per origin; the part
// measures its bytes, and shows that many origins (50,000 within one window) stay within the bound (`maxKeys`,
// default 1000), each figure in a fresh child process with --expose-gc.
import { fork } from 'node:child_process'
import { join } from 'node:path'
import { alternate, atMost, type Contender, mark, type PartResult, pick, settings, type TargetCheck } from './harness'

const SUBJECTS = ['retry budget', 'adaptive throttle'] as const
// The client's README promises under 2 KB per origin.
const TARGET_BYTES_PER_ORIGIN = 2048
// With the bound, 50 times the origins may cost at most 1.1 times the heap of the bound's worth.
const TARGET_RATIO = 1.1

interface Measurement {
  readonly bytes: number
  readonly held: number
}

function measure(name: string, origins: number, maxKeys: number): Promise<Measurement> {
  const child = fork(join(__dirname, 'client-memory-child.ts'), [name, String(origins), String(maxKeys)], {
    cwd: join(__dirname, '..'),
    execArgv: ['--expose-gc', '--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  return new Promise((resolve, reject) => {
    child.once('message', (message: Measurement) => {
      const expected = Math.min(origins, maxKeys)
      if (message.held !== expected) reject(new Error(`${name} holds ${message.held} origins, not ${expected}`))
      else resolve(message)
    })
    child.once('exit', (code) => reject(new Error(`client memory child for ${name} exited with ${code}`)))
  })
}

/** Runs the client memory part and returns its table and target checks. */
export async function runClientMemory(): Promise<PartResult> {
  const bound = 1000
  const many = settings.tiny ? 5_000 : 50_000
  const rounds = settings.tiny ? { rounds: 1, warmup: 0 } : { rounds: 3, warmup: 0 }
  const contenders: Contender[] = SUBJECTS.flatMap((name) => [
    // Bytes per origin: `bound` origins, each kept.
    { name: `${name}: per origin`, measure: async () => (await measure(name, bound, bound)).bytes / bound },
    { name: `${name}: ${bound} origins`, measure: async () => (await measure(name, bound, bound)).bytes },
    { name: `${name}: ${many} origins`, measure: async () => (await measure(name, many, bound)).bytes },
  ])
  const results = await alternate(contenders, rounds)
  const targets: TargetCheck[] = []
  const rows = SUBJECTS.map((name) => {
    const perOrigin = pick(results, `${name}: per origin`).median
    const atBound = pick(results, `${name}: ${bound} origins`).median
    const atMany = pick(results, `${name}: ${many} origins`).median
    const bytes = atMost(
      `client memory: ${name}, bytes per origin`,
      perOrigin,
      TARGET_BYTES_PER_ORIGIN,
      'bytes',
      'the client README promises under 2 KB of state per origin (issue 25)',
    )
    const ratio = atMost(
      `client memory: ${name}, heap at ${many} origins / at ${bound}`,
      atMany / atBound,
      TARGET_RATIO,
      'ratio',
      'state per origin is bounded (least recently used dropped): many origins cost no more than the bound (issue 25)',
    )
    targets.push(bytes, ratio)
    return [name, perOrigin, mark(bytes), atBound, atMany, atMany / atBound, mark(ratio)]
  })
  return {
    title: `7. Client memory: bytes per origin, and ${many.toLocaleString('en')} origins under the default bound`,
    method:
      'Each figure is one fresh process (node --expose-gc): the origin strings are made first, the memory (heapUsed ' +
      'plus arrayBuffers: the sliding counts are typed arrays, stored outside the JS heap) is read after two full GCs, one request to each origin is recorded on a clock that stands still (so no origin is idle long ' +
      `enough to be forgotten), and the memory is read again after two GCs. Per origin: ${bound} origins, all kept, ` +
      `the growth / ${bound}. Then ${many.toLocaleString('en')} origins under maxKeys ${bound} (the default), against ` +
      `${bound} origins measured in the same run: the ratio shows the bound holds. ${rounds.rounds} rounds, ` +
      'alternating.',
    tables: [
      {
        title: 'Memory of the state per origin',
        columns: [
          { header: 'state', kind: 'text' },
          { header: 'B/origin', kind: 'bytes' },
          { header: '', kind: 'text' },
          { header: `${bound} origins`, kind: 'bytes' },
          { header: `${many} origins`, kind: 'bytes' },
          { header: 'ratio', kind: 'ratio' },
          { header: '', kind: 'text' },
        ],
        rows,
      },
    ],
    targets,
  }
}
