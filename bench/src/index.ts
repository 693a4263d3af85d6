// `npm run bench`: runs every part in turn, prints its tables, and writes them all to bench/RESULTS.md with the
// machine they ran on. `--tiny` (or SLUICE_BENCH_TINY=1) runs each part for about a second and writes nothing.
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { cpus } from 'node:os'
import { join } from 'node:path'
import { runClientMemory } from './client-memory'
import { runCommands } from './commands'
import { runCore } from './core'
import { runEvents } from './events'
import { format, mark, type PartResult, renderTable, settings } from './harness'
import { runHttp } from './http'
import { runMemory } from './memory'
import { peersAgainstPrevious } from './previous'
import { runProtect } from './protect'
import { runRedis } from './redis'
import { redisVersion } from './redis-env'

/** The parts, in order; `--only=core,http` picks some of them (see `onlyParts`). */
export const PARTS: Readonly<Record<string, () => Promise<PartResult>>> = {
  core: runCore,
  http: runHttp,
  redis: runRedis,
  memory: runMemory,
  commands: runCommands,
  events: runEvents,
  client: runClientMemory,
  protect: runProtect,
}

export interface Machine {
  readonly date: string
  readonly cpu: string
  readonly cores: number
  readonly node: string
  readonly redis: string
}

export function machine(redisVersion: string, startedAt = new Date()): Machine {
  const list = cpus()
  return {
    date: startedAt.toISOString(),
    cpu: list[0]?.model.trim() ?? 'unknown',
    cores: list.length,
    node: process.version,
    redis: redisVersion,
  }
}

/**
 * The whole report: the machine, every target with its mark and its reason, each part's method and tables, then
 * `notes`. Only targets the project pursues are checked; the ones it dropped, and why, are in analysis.md.
 */
export function renderReport(
  host: Machine,
  parts: readonly PartResult[],
  notes = '',
  previous: string | undefined = undefined,
): string {
  const targets = parts.flatMap((part) => part.targets)
  const summary = renderTable({
    title: `Targets: ${targets.filter((t) => t.passed).length} of ${targets.length} met`,
    columns: [
      { header: 'ratio', kind: 'text' },
      { header: 'measured', kind: 'text' },
      { header: 'target', kind: 'text' },
      { header: '', kind: 'text' },
      { header: 'why this target', kind: 'text' },
    ],
    rows: targets.map((t) => [t.what, format(t.value, t.kind), t.target, mark(t), t.reason]),
  })
  return [
    '# Sluice benchmarks',
    '',
    `Run started ${host.date} on ${host.cpu} (${host.cores} cores), Node ${host.node}, Redis ${host.redis}.`,
    'Produced by `npm run bench` (see bench/src); every figure is the median of alternating rounds after a warm-up,',
    'with the min and max of those rounds. Ratios are paired per round, then summarized.',
    '',
    summary,
    '',
    peersAgainstPrevious(parts, previous),
    ...parts.flatMap((part) => [
      '',
      `## ${part.title}`,
      '',
      part.method,
      '',
      ...part.tables.flatMap((t) => [renderTable(t), '']),
    ]),
    ...(notes ? ['', notes.trimEnd(), ''] : []),
  ].join('\n')
}

/**
 * The parts `--only=core,http` (or `--only core,http`) names; undefined without it. A name that is no part is an
 * error: a typo would otherwise run nothing and print an empty report.
 */
export function onlyParts(argv: readonly string[]): string[] | undefined {
  const at = argv.findIndex((arg) => arg === '--only' || arg.startsWith('--only='))
  if (at === -1) return undefined
  const value = argv[at] === '--only' ? argv[at + 1] : argv[at]?.slice('--only='.length)
  const names = (value ?? '').split(',').filter((name) => name !== '')
  const unknown = names.filter((name) => !(name in PARTS))
  if (names.length === 0 || unknown.length > 0) {
    throw new Error(`bench: --only takes parts among ${Object.keys(PARTS).join(', ')} (got ${JSON.stringify(value)})`)
  }
  return names
}

async function main(): Promise<void> {
  const only = onlyParts(process.argv)
  const startedAt = new Date()
  const results: PartResult[] = []
  for (const [name, run] of Object.entries(PARTS)) {
    if (only !== undefined && !only.includes(name)) continue
    const started = performance.now()
    const result = await run()
    results.push(result)
    console.log(`\n## ${result.title}  (${((performance.now() - started) / 1000).toFixed(1)} s)\n`)
    for (const table of result.tables) console.log(`${renderTable(table)}\n`)
  }
  const notes = readFileSync(join(__dirname, 'analysis.md'), 'utf8')
  // The report this run replaces, for the peers' figures beside this run's.
  const resultsPath = join(__dirname, '..', 'RESULTS.md')
  const previous = existsSync(resultsPath) ? readFileSync(resultsPath, 'utf8') : undefined
  const report = renderReport(machine(redisVersion(), startedAt), results, notes, previous)
  // The header and the targets with their marks: everything before the first part.
  console.log(`\n${report.slice(0, report.indexOf('\n## '))}`)
  console.log(`\n${peersAgainstPrevious(results, previous)}`)
  if (!settings.tiny && only === undefined) {
    writeFileSync(resultsPath, report)
    console.log('\nWrote bench/RESULTS.md')
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error)
    process.exit(1)
  })
}
