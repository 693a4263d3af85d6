// Part 2: HTTP throughput with autocannon against hello-world servers, bare and behind Sluice or the framework's
// peer, each server in a child process of its own, the load generated from this process.
import { type ChildProcess, fork } from 'node:child_process'
import { join } from 'node:path'
import autocannon from 'autocannon'
import {
  alternate,
  atLeast,
  type Contender,
  mark,
  type PartResult,
  pick,
  RATE_COLUMNS,
  RATIO_COLUMNS,
  ratio,
  settings,
  summarize,
  type Table,
  type TargetCheck,
} from './harness'
import type { Framework, Variant } from './http-server'

/**
 * Per framework, its own limiter: Sluice must keep level with it, admitting and rejecting. The share of the bare
 * server's throughput (95%, 92%), the CPU Sluice adds per request (10 µs, 3 µs) and rejected-over-admitted CPU are
 * shown but no longer targets: the default IETF headers alone cost more than a 3 µs budget, a rejection's required
 * headers (Retry-After, Cache-Control) keep it at an admission's cost, and Express's per-request cost swings by more
 * than 10 µs between rounds on this machine (analysis.md).
 */
const FRAMEWORKS: readonly { framework: Framework; peer: string }[] = [
  { framework: 'express', peer: 'express-rate-limit' },
  { framework: 'koa', peer: 'koa-ratelimit' },
  { framework: 'fastify', peer: '@fastify/rate-limit' },
]
/** Sluice's throughput over each peer's, nothing rejected and all rejected. */
const OVER_PEER = 1
const WHY_ADMITTING = "level with the framework's own limiter, which users would pick otherwise"
const WHY_REJECTING = "a flood of 429s costs no more than with the framework's own limiter"
/** Per minute, per client: far above what one client sends in a run, so nothing is rejected. */
const PASS_LIMIT = 100_000_000
/** One request a minute: after the first, every request is rejected. */
const REJECT_LIMIT = 1
const CONNECTIONS = 10
/** Tiny mode: requests per run (ten per connection), and how often autocannon samples, in ms (see `load`). */
const TINY_REQUESTS = 100
const TINY_SAMPLE_MS = 10

interface Server {
  readonly url: string
  readonly child: ChildProcess
}

/** The server's CPU time so far (user + system), in microseconds. */
function cpuTime(server: Server): Promise<number> {
  return new Promise((resolve) => {
    const onMessage = (message: { cpu?: NodeJS.CpuUsage }) => {
      if (message.cpu === undefined) return
      server.child.off('message', onMessage)
      resolve(message.cpu.user + message.cpu.system)
    }
    server.child.on('message', onMessage)
    server.child.send('cpu')
  })
}

/**
 * Forks a server (tsx in the child as in the parent; bench/ as its cwd, so @sluice/* are the built packages). The
 * server is CommonJS, so tsx's require hook is all it needs: without tsx's ESM hooks (`--import tsx`), which run
 * every module's resolution through a loader thread, a child starts on about half the CPU (0.3 s, not 0.7 s, for
 * Express), and tiny mode starts fifteen of them.
 */
function startServer(framework: Framework, variant: Variant, limit: number): Promise<Server> {
  const child = fork(join(__dirname, 'http-server.ts'), [framework, variant, String(limit)], {
    cwd: join(__dirname, '..'),
    execArgv: ['--require', 'tsx/cjs'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  return new Promise((resolve, reject) => {
    child.once('message', (message: { port: number }) => resolve({ url: `http://127.0.0.1:${message.port}/`, child }))
    child.once('exit', (code) => reject(new Error(`${framework} ${variant} server exited with ${code}`)))
  })
}

function stopServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    if (server.child.exitCode !== null) return resolve()
    server.child.once('exit', () => resolve())
    server.child.kill()
  })
}

interface Load {
  readonly requestsPerSecond: number
  readonly rejectedShare: number
  /** The server's CPU time per request, in microseconds. */
  readonly cpuPerRequest: number
}

async function load(server: Server, durationS: number): Promise<Load> {
  const { url } = server
  const cpuBefore = await cpuTime(server)
  const started = performance.now()
  const result = await autocannon(
    settings.tiny
      ? // autocannon answers at its next sample, once a second by default: a run of 100 requests that took 50 ms
        // would wait out the second. Sampling every 10 ms ends it when its last reply is in.
        { url, connections: CONNECTIONS, amount: TINY_REQUESTS, sampleInt: TINY_SAMPLE_MS }
      : { url, connections: CONNECTIONS, duration: durationS },
  )
  // autocannon reports whole seconds; the wall clock around the run is finer, and the same for every server.
  const seconds = (performance.now() - started) / 1000
  if (result.errors > 0) throw new Error(`${result.errors} connection errors against ${url}`)
  const cpu = (await cpuTime(server)) - cpuBefore
  return {
    requestsPerSecond: result.requests.total / seconds,
    rejectedShare: result.non2xx / Math.max(1, result.requests.total),
    cpuPerRequest: cpu / Math.max(1, result.requests.total),
  }
}

/** Runs part 2 and returns its tables and target checks. */
export async function runHttp(): Promise<PartResult> {
  const durationS = 1
  const rounds = settings.tiny ? { rounds: 1, warmup: 0 } : { rounds: 9, warmup: 1 }
  const passRows: (string | number)[][] = []
  const rejectRows: (string | number)[][] = []
  const rateRows: (string | number)[][] = []
  const cpuRows: (string | number)[][] = []
  const rejectCpuRows: (string | number)[][] = []
  const addedRows: (string | number)[][] = []
  const targets: TargetCheck[] = []
  for (const { framework, peer } of FRAMEWORKS) {
    const setups: { name: string; variant: Variant; limit: number }[] = [
      { name: 'bare', variant: 'bare', limit: 0 },
      { name: 'sluice', variant: 'sluice', limit: PASS_LIMIT },
      { name: peer, variant: 'peer', limit: PASS_LIMIT },
      { name: 'sluice, rejecting', variant: 'sluice', limit: REJECT_LIMIT },
      { name: `${peer}, rejecting`, variant: 'peer', limit: REJECT_LIMIT },
    ]
    const servers = await Promise.all(setups.map((s) => startServer(framework, s.variant, s.limit)))
    const rejected = new Map<string, number[]>()
    const cpu = new Map<string, number[]>()
    try {
      const contenders: Contender[] = setups.map((setup, i) => ({
        name: setup.name,
        measure: async () => {
          const { requestsPerSecond, rejectedShare, cpuPerRequest } = await load(servers[i] as Server, durationS)
          rejected.set(setup.name, [...(rejected.get(setup.name) ?? []), rejectedShare])
          cpu.set(setup.name, [...(cpu.get(setup.name) ?? []), cpuPerRequest])
          return requestsPerSecond
        },
      }))
      const results = await alternate(contenders, rounds)
      // The warm-up rounds' CPU figures are dropped as their throughput is.
      const cpuOf = (name: string) => summarize((cpu.get(name) ?? []).slice(rounds.warmup))
      for (const { name } of setups) {
        const s = pick(results, name)
        const shares = rejected.get(name) ?? [0]
        rateRows.push([framework, name, s.median, s.min, s.max, cpuOf(name).median, Math.max(...shares)])
      }
      const bareCpu = cpuOf('bare').median
      for (const { name } of setups.slice(1)) {
        const c = cpuOf(name)
        cpuRows.push([framework, name, c.median, c.median - bareCpu, bareCpu / c.median])
      }
      const bare = pick(results, 'bare')
      const sluice = pick(results, 'sluice')
      const overBare = ratio(sluice, bare)
      passRows.push([framework, 'bare', overBare.median, overBare.min, overBare.max, '', ''])
      const overPeer = ratio(sluice, pick(results, peer))
      const ahead = atLeast(`HTTP ${framework}: sluice / ${peer}`, overPeer.median, OVER_PEER, 'ratio', WHY_ADMITTING)
      targets.push(ahead)
      passRows.push([framework, peer, overPeer.median, overPeer.min, overPeer.max, ahead.target, mark(ahead)])
      const peerOverBare = ratio(pick(results, peer), bare)
      passRows.push([`${framework} (${peer})`, 'bare', peerOverBare.median, peerOverBare.min, peerOverBare.max, '', ''])
      for (const name of ['sluice, rejecting', `${peer}, rejecting`]) {
        const r = ratio(pick(results, name), bare)
        rejectRows.push([framework, name, r.median, r.min, r.max, '', ''])
      }
      const rejecting = ratio(pick(results, 'sluice, rejecting'), pick(results, `${peer}, rejecting`))
      const beats = atLeast(
        `HTTP ${framework}, all rejected: sluice / ${peer}`,
        rejecting.median,
        OVER_PEER,
        'ratio',
        WHY_REJECTING,
      )
      targets.push(beats)
      rejectRows.push([
        framework,
        `sluice over ${peer}`,
        rejecting.median,
        rejecting.min,
        rejecting.max,
        beats.target,
        mark(beats),
      ])
      // CPU per rejected request over CPU per admitted one, paired round by round (each ran in the same round).
      for (const limiter of ['sluice', peer]) {
        const admitted = cpuOf(limiter)
        const refused = cpuOf(`${limiter}, rejecting`)
        const r = ratio(refused, admitted)
        rejectCpuRows.push([framework, limiter, admitted.median, refused.median, r.median, r.min, r.max])
      }
      // The CPU each limiter adds to the bare server when nothing is rejected, paired round by round.
      const bareRounds = (cpu.get('bare') ?? []).slice(rounds.warmup)
      for (const limiter of ['sluice', peer]) {
        const added = summarize((cpu.get(limiter) ?? []).slice(rounds.warmup).map((c, i) => c - (bareRounds[i] ?? 0)))
        addedRows.push([framework, limiter, added.median, added.min, added.max])
      }
    } finally {
      await Promise.all(servers.map(stopServer))
    }
  }
  const tables: Table[] = [
    {
      title: 'Requests per second',
      columns: [
        { header: 'framework', kind: 'text' },
        { header: 'server', kind: 'text' },
        ...RATE_COLUMNS,
        { header: 'server CPU µs/req', kind: 'micros' },
        { header: 'most rejected', kind: 'share' },
      ],
      rows: rateRows,
    },
    {
      title:
        'Server CPU time per request (median of the rounds): what the limiter adds to the bare server, and the ' +
        "share of the bare server's throughput it would keep if the server were CPU-bound",
      columns: [
        { header: 'framework', kind: 'text' },
        { header: 'server', kind: 'text' },
        { header: 'CPU µs/req', kind: 'micros' },
        { header: 'added µs/req', kind: 'signed' },
        { header: 'bare CPU / this CPU', kind: 'percent' },
      ],
      rows: cpuRows,
    },
    {
      title: 'Nothing rejected: Sluice over the bare server and over the peer (the peer over bare for reference)',
      columns: [
        { header: 'limited by', kind: 'text' },
        { header: 'over', kind: 'text' },
        ...RATIO_COLUMNS.slice(0, 3).map((c) => ({ ...c, kind: 'percent' as const })),
        ...RATIO_COLUMNS.slice(3),
      ],
      rows: passRows,
    },
    {
      title: 'All requests rejected (429) but the first: throughput over the bare server, and Sluice over the peer',
      columns: [
        { header: 'framework', kind: 'text' },
        { header: 'limited by', kind: 'text' },
        ...RATIO_COLUMNS.slice(0, 3).map((c) => ({ ...c, kind: 'percent' as const })),
        ...RATIO_COLUMNS.slice(3),
      ],
      rows: rejectRows,
    },
    {
      title:
        'All requests rejected: server CPU per rejected request against per admitted request (the rejected one ' +
        'answers before the handler runs, so it should cost no more)',
      columns: [
        { header: 'framework', kind: 'text' },
        { header: 'limiter', kind: 'text' },
        { header: 'admitted µs/req', kind: 'micros' },
        { header: 'rejected µs/req', kind: 'micros' },
        { header: 'rejected / admitted', kind: 'ratio' },
        { header: 'min', kind: 'ratio' },
        { header: 'max', kind: 'ratio' },
      ],
      rows: rejectCpuRows,
    },
    {
      title: 'Nothing rejected: server CPU each limiter adds to the bare server per request (paired per round)',
      columns: [
        { header: 'framework', kind: 'text' },
        { header: 'limiter', kind: 'text' },
        { header: 'added µs/req', kind: 'signed' },
        { header: 'min', kind: 'signed' },
        { header: 'max', kind: 'signed' },
      ],
      rows: addedRows,
    },
  ]
  return {
    title: '2. HTTP requests per second (autocannon, loopback)',
    method:
      'Each server runs in a child process of its own (one per framework and variant, all started before the ' +
      'rounds and idle when not measured); autocannon runs in the parent with ' +
      `${CONNECTIONS} connections, no pipelining, ${durationS} s per round, ${rounds.warmup} warm-up round and ` +
      `${rounds.rounds} measured, alternating. Express 5, Koa 3 and Fastify 5 serve "hello world" on GET /. ` +
      'Each limiter keys by client IP with its default options and headers (Sluice: IETF RateLimit and ' +
      'RateLimit-Policy; express-rate-limit: X-RateLimit-*; koa-ratelimit with a Map as its db: ' +
      'X-RateLimit-*; @fastify/rate-limit: x-ratelimit-*), limit 1e8 per minute; in the rejecting runs, 1 per ' +
      'minute, so every request after the first is a 429. All requests come from 127.0.0.1, so this is one hot key. ' +
      'The parent (load) and the server each have about one of the two cores. Throughput on a shared 2-core ' +
      "machine swings with other work, so the servers' own CPU time per request (process.cpuUsage around each " +
      'run) is given too: it is the steadier measure of what a limiter costs. The CPU tables pair figures within ' +
      'a round: CPU per rejected request over CPU per admitted request for the same limiter, and the ' +
      "limiter's server over the bare server when nothing is rejected.",
    tables,
    targets,
  }
}
