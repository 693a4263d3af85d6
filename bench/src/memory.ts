// Part 4: heap bytes per key with one million keys, for each algorithm (and the peers for reference), each
// measured in a fresh child process with --expose-gc.
import { fork } from 'node:child_process'
import { join } from 'node:path'
import { ALGORITHMS } from './core'
import { alternate, atMost, type Contender, mark, type PartResult, pick, settings, type TargetCheck } from './harness'

const PEERS = ['rate-limiter-flexible', 'express-rate-limit'] as const
const TARGET_BYTES = 200
const WHY = 'the default maxKeys (100 000 keys) stays within 20 MB of heap'
const WITH_TARGET = new Set(['token-bucket', 'sliding-window'])

interface Measurement {
  readonly bytesPerKey: number
  readonly held: number
}

function measure(name: string, keys: number): Promise<Measurement> {
  const child = fork(join(__dirname, 'memory-child.ts'), [name, String(keys)], {
    cwd: join(__dirname, '..'),
    execArgv: ['--expose-gc', '--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  return new Promise((resolve, reject) => {
    child.once('message', (message: Measurement) => {
      if (message.held !== keys) reject(new Error(`${name} holds ${message.held} keys, not ${keys}`))
      else resolve(message)
    })
    child.once('exit', (code) => reject(new Error(`memory child for ${name} exited with ${code}`)))
  })
}

/** Runs part 4 and returns its table and target checks. */
export async function runMemory(): Promise<PartResult> {
  const keys = settings.tiny ? 20_000 : 1_000_000
  const rounds = settings.tiny ? { rounds: 1, warmup: 0 } : { rounds: 3, warmup: 0 }
  const names = [...ALGORITHMS.map((a) => `sluice ${a}`), ...PEERS]
  const contenders: Contender[] = names.map((name) => ({
    name,
    measure: async () => (await measure(name.replace(/^sluice /, ''), keys)).bytesPerKey,
  }))
  const results = await alternate(contenders, rounds)
  const targets: TargetCheck[] = []
  const rows = names.map((name) => {
    const s = pick(results, name)
    const algorithm = name.replace(/^sluice /, '')
    if (!WITH_TARGET.has(algorithm)) return [name, s.median, s.min, s.max, '', '']
    const checked = atMost(`memory: sluice ${algorithm}, bytes per key`, s.median, TARGET_BYTES, 'bytes', WHY)
    targets.push(checked)
    return [name, s.median, s.min, s.max, checked.target, mark(checked)]
  })
  return {
    title: `4. Memory: heap bytes per key (${keys.toLocaleString('en')} keys)`,
    method:
      `Each figure is one fresh process (node --expose-gc): the ${keys.toLocaleString('en')} key strings are made ` +
      'first, then heapUsed is read after two full GCs, every key is consumed once (limit 100 per hour: nothing ' +
      'expires or is evicted; MemoryStore maxKeys is above the key count), and heapUsed is read again after two ' +
      `GCs. Bytes per key = the difference / keys: the store's own cost, without the key strings (about 24 bytes ` +
      `each for "user:123456"), which the caller holds anyway. ${rounds.rounds} rounds, alternating; the peers are ` +
      'for reference (express-rate-limit keeps a plain counter; rate-limiter-flexible also a timer per key).',
    tables: [
      {
        title: 'Heap bytes per key',
        columns: [
          { header: 'store', kind: 'text' },
          { header: 'median B/key', kind: 'bytes' },
          { header: 'min', kind: 'bytes' },
          { header: 'max', kind: 'bytes' },
          { header: 'target', kind: 'text' },
          { header: '', kind: 'text' },
        ],
        rows,
      },
    ],
    targets,
  }
}
