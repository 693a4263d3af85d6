// Part 3: Redis decisions per second from one process at 1, 64 and 256 requests in flight: Sluice's RedisStore
// against rate-limiter-flexible's RateLimiterRedis and express-rate-limit with rate-limit-redis on the same
// redis-server, and redis-benchmark sending Sluice's EVALSHA for one decision (same script, same arguments), pipelined.
import { spawn } from 'node:child_process'
import { type AlgorithmName, createLimiter } from '@sluice/core'
import { RedisStore } from '@sluice/redis'
import Redis from 'ioredis'
import { RateLimiterRedis } from 'rate-limiter-flexible'
import { storedSlidingLog } from '../../scripts/sliding-log-layout'
import {
  alternate,
  atLeast,
  atMost,
  type Contender,
  concurrentOpsPerSecond,
  mark,
  type PartResult,
  pick,
  RATE_COLUMNS,
  RATIO_COLUMNS,
  ratio,
  type Summary,
  settings,
  summarize,
  type Table,
  type TargetCheck,
} from './harness'
import { commandStats, type RedisServer, rateLimitRedisStore, startRedis, statsBetween } from './redis-env'

export const IN_FLIGHT = [1, 64, 256] as const
const SLUICE_ALGORITHMS: readonly AlgorithmName[] = ['fixed-window', 'sliding-window']
const PEERS = ['rate-limiter-flexible', 'express-rate-limit + rate-limit-redis'] as const
const KEYS = 10_000
/** Per key per day: nothing is rejected. */
const LIMIT = 100_000_000
const WINDOW_MS = 86_400_000
/**
 * Sluice over the best peer, per number in flight (issue 12): coalescing must pay off as more decisions are in
 * flight. 1.0x at 1 in flight was dropped: a lone decision on Redis's clock costs Redis about twice the peers' INCR
 * script, and the client's round trip is the same for both; the floor contender shows that even the least such
 * decision, sent bare, makes no more than the best peer at 1 in flight (analysis.md).
 */
const TARGETS: Readonly<Record<number, number>> = { 64: 1.5, 256: 2.0 }
/** Runs of the alternating rounds per number in flight (issue 27: the spread of 3 runs, min / median / max). */
const RUNS = settings.tiny ? 1 : 3
const WHY_COALESCED = 'coalescing pays off as more decisions are in flight'
const WHY_REDIS_TIME = 'Redis runs one script at a time: its time per decision bounds every instance together'
const WHY_LONG_LOG = 'a long sliding log costs about what a short one does (O(log L) per call)'
/**
 * The most µs Redis may spend per fixed-window decision when decisions are coalesced (64 and 256 in flight): one
 * Redis server then makes at least 200 000 a second.
 */
const MICROS_PER_DECISION = 5

/** redis-benchmark writes `__rand_int__` as a 12-digit number; Sluice's keys have the same shape and length. */
const keyOf = (i: number) => `user:${String(i % KEYS).padStart(12, '0')}`

/**
 * Sluice's EVALSHA for one algorithm, as it goes over the wire, with the user key replaced by redis-benchmark's
 * `__rand_int__` placeholder: read with MONITOR while Sluice makes one call for the key `user:__rand_int__`.
 */
async function captureEvalsha(server: RedisServer, algorithm: AlgorithmName): Promise<string[]> {
  const client = new Redis({ host: server.host, port: server.port })
  // Ready first: the client's own ready check (INFO) echoed on a MONITOR connection still waiting for its OK made
  // ioredis fail with "Command queue state error".
  await client.ping()
  const monitor = await client.monitor()
  const seen: string[][] = []
  monitor.on('monitor', (_time: string, args: string[]) => seen.push(args))
  const limiter = createLimiter({
    algorithm,
    limit: LIMIT,
    window: WINDOW_MS,
    store: new RedisStore({ client, timeout: 1000, onError: 'closed' }),
  })
  await limiter.consume('user:__rand_int__')
  await new Promise((resolve) => setTimeout(resolve, 100))
  monitor.disconnect()
  client.disconnect()
  const call = seen.find((args) => args[0]?.toLowerCase() === 'evalsha')
  if (call === undefined) throw new Error(`no EVALSHA seen for ${algorithm}: ${JSON.stringify(seen)}`)
  return call
}

/**
 * `requests` rounded up to whole pipelines of `inFlight`. redis-benchmark counts every reply of the last pipeline, so
 * with a partial one it finishes past `-n`; if its 250 ms timer then fires before it exits, it sees no client left and
 * fewer-or-more than `-n` done, and aborts with "All clients disconnected" (1 run in 20 of 300 001 EVALs 256 at a
 * time here, none of 300 032).
 */
function wholePipelines(requests: number, inFlight: number): number {
  return Math.ceil(requests / inFlight) * inFlight
}

/** Runs redis-benchmark for `requests` calls of `command` with `inFlight` pipelined on one connection. */
function redisBenchmark(server: RedisServer, command: readonly string[], inFlight: number, requests: number) {
  const args = ['-h', server.host, '-p', String(server.port), '-c', '1', '-P', String(inFlight)]
  args.push('-n', String(requests), '-r', String(KEYS), '--csv', ...command)
  return new Promise<number>((resolve, reject) => {
    const child = spawn('redis-benchmark', args, { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8')
    })
    child.stderr.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8')
    })
    child.once('error', reject)
    child.once('exit', (code) => {
      // --csv: a header line, then "<command>","<requests per second>",...
      const rps = /^"[^"]*","([\d.]+)"/m.exec(out.split('\n').slice(1).join('\n'))
      if (code !== 0 || rps === null) reject(new Error(`redis-benchmark failed (${code}):\n${out}`))
      else resolve(Number(rps[1]))
    })
  })
}

interface Connections {
  readonly clients: Redis[]
  connect(): Redis
}

/** Decisions made so far, per contender: with the script calls Redis counted, the decisions per call. */
const decisionsMade = new Map<string, number>()

/** `op`, counting each call as a decision of `name`. */
function counted(name: string, op: (i: number) => Promise<unknown>): (i: number) => Promise<unknown> {
  decisionsMade.set(name, decisionsMade.get(name) ?? 0)
  return (i) => {
    decisionsMade.set(name, (decisionsMade.get(name) as number) + 1)
    return op(i)
  }
}

/** The sliding log's lengths measured, and how much dearer a call on the longest may be than on the shortest. */
const LOG_LENGTHS = [100, 1000, 20_000] as const
const LONGEST_LOG_OVER_SHORTEST = 2

/**
 * µs in Redis per sliding-log call on a log of each length: the log is written at once under the key the store
 * uses, then `calls` decisions are made on it one at a time, each admitted. The median of `rounds` alternating rounds,
 * the log written again before each.
 */
async function slidingLogCosts(connections: Connections, admin: Redis, calls: number, rounds: number) {
  const windowMs = 3_600_000
  const limit = 1_000_000
  const store = new RedisStore({ client: connections.connect(), timeout: 5000, onError: 'closed' })
  const limiter = createLimiter({ algorithm: 'sliding-log', limit, window: windowMs, store })
  const redisKeys = new Map<number, string>()
  for (const entries of LOG_LENGTHS) {
    await limiter.consume(`log:${entries}`)
    const [found] = await admin.keys(`*{log:${entries}}`)
    if (found === undefined) throw new Error(`no Redis key found for the sliding log of ${entries} entries`)
    redisKeys.set(entries, found)
  }
  const micros = new Map<number, number[]>(LOG_LENGTHS.map((entries) => [entries, []]))
  for (let round = 0; round < rounds; round++) {
    for (const entries of LOG_LENGTHS) {
      // Redis's clock, which the store decides on: the log's newest entry 1 ms before it.
      const [seconds = 0, microseconds = 0] = (await admin.time()).map(Number)
      const nowMs = seconds * 1000 + Math.floor(microseconds / 1000)
      await admin.set(
        redisKeys.get(entries) as string,
        storedSlidingLog(entries, nowMs - entries, windowMs),
        'PX',
        windowMs,
      )
      const before = await commandStats(admin)
      for (let i = 0; i < calls; i++) {
        const decision = await limiter.consume(`log:${entries}`)
        if (!decision.allowed) throw new Error(`the sliding log of ${entries} entries refused a call`)
      }
      const script = statsBetween(before, await commandStats(admin)).get('evalsha')
      micros.get(entries)?.push(script === undefined ? 0 : script.usec / script.calls)
    }
  }
  const rows = LOG_LENGTHS.map((entries) => {
    const s = summarize(micros.get(entries) as number[])
    return [entries, s.median, s.min, s.max]
  })
  const longest = summarize(micros.get(LOG_LENGTHS[2]) as number[]).median
  const shortest = summarize(micros.get(LOG_LENGTHS[0]) as number[]).median
  const target = atMost(
    `Redis sliding log: µs per call at ${LOG_LENGTHS[2]} entries / at ${LOG_LENGTHS[0]}`,
    longest / shortest,
    LONGEST_LOG_OVER_SHORTEST,
    'ratio',
    WHY_LONG_LOG,
  )
  return { rows, target }
}

/** The name of Sluice's contender: coalesced (the default), or each decision its own call (`coalesce: false`). */
const sluiceName = (algorithm: AlgorithmName, coalesce = true) =>
  coalesce ? `sluice ${algorithm}` : `sluice ${algorithm}, not coalesced`

function sluiceContender(
  connections: Connections,
  algorithm: AlgorithmName,
  inFlight: number,
  durationMs: number,
  coalesce = true,
): Contender {
  // onError 'closed' and a generous timeout: a slow reply must fail the run, never be answered by the local
  // fallback (which would be a memory limiter measured as Redis).
  const store = new RedisStore({ client: connections.connect(), timeout: 5000, onError: 'closed', coalesce })
  const limiter = createLimiter({ algorithm, limit: LIMIT, window: WINDOW_MS, store })
  const name = sluiceName(algorithm, coalesce)
  const op = counted(name, (i) => limiter.consume(keyOf(i)))
  return { name, measure: () => concurrentOpsPerSecond(durationMs, inFlight, op) }
}

async function peerContenders(connections: Connections, inFlight: number, durationMs: number): Promise<Contender[]> {
  const flexible = new RateLimiterRedis({
    storeClient: connections.connect(),
    points: LIMIT,
    duration: WINDOW_MS / 1000,
    keyPrefix: 'rlflx',
  })
  const client = connections.connect()
  const rateLimitRedis = rateLimitRedisStore(client, WINDOW_MS)
  const flexibleOp = counted(PEERS[0], (i) => flexible.consume(keyOf(i)))
  const rateLimitRedisOp = counted(PEERS[1], (i) => rateLimitRedis.increment(keyOf(i)))
  return [
    { name: PEERS[0], measure: () => concurrentOpsPerSecond(durationMs, inFlight, flexibleOp) },
    { name: PEERS[1], measure: () => concurrentOpsPerSecond(durationMs, inFlight, rateLimitRedisOp) },
  ]
}

/**
 * The least a fixed-window decision on Redis's clock can do, as DESIGN asks of one (the time from TIME, a call run
 * past its deadline refused, the count read and written back with its expiry in the same script), and nothing
 * more: one rule, no blocks, no clock stepping back, no batch, no check of what the key holds, and the bare ioredis
 * `evalsha` with five arguments. What 1 in flight would make with a store that cost nothing over that script.
 */
const FLOOR_SCRIPT = `local t = redis.call('TIME')
local now = t[1] * 1000 + (t[2] - t[2] % 1000) / 1000
if now > ARGV[1] + 0 then return redis.error_reply('LATE') end
local limit, window, cost = ARGV[2] + 0, ARGV[3] + 0, ARGV[4] + 0
local start = now - now % window
local used = 0
local value = redis.call('GET', KEYS[1])
if value then
  local seen_at, count = struct.unpack('<dd', value)
  if seen_at == start then used = count end
end
local left = start + window - now
if used + cost > limit then return { 0, limit - used, left, left, now } end
redis.call('SET', KEYS[1], struct.pack('<dd', start, used + cost), 'PXAT', start + window)
return { 1, limit - used - cost, left, 0, now }`

/** The name of the contender that sends {@link FLOOR_SCRIPT}. */
const FLOOR = 'floor: the least fixed window on Redis time, sent bare'

/** {@link FLOOR_SCRIPT} as a contender, on its own connection (deadline: a second from the call). */
async function floorContender(connections: Connections, inFlight: number, durationMs: number): Promise<Contender> {
  const client = connections.connect()
  const sha = (await client.script('LOAD', FLOOR_SCRIPT)) as string
  const op = counted(FLOOR, (i) =>
    client.evalsha(sha, 1, `floor:{${keyOf(i)}}`, Date.now() + 1000, LIMIT, WINDOW_MS, 1),
  )
  return { name: FLOOR, measure: () => concurrentOpsPerSecond(durationMs, inFlight, op) }
}

/** redis-benchmark as a contender: each round sized from the last one to take about `durationMs`. */
function ceilingContender(
  server: RedisServer,
  algorithm: AlgorithmName,
  command: readonly string[],
  inFlight: number,
  durationMs: number,
): Contender {
  let lastRate = 20_000
  return {
    name: `redis-benchmark ${algorithm}`,
    measure: async () => {
      const wanted = Math.max(inFlight * 10, Math.round((lastRate * durationMs) / 1000))
      const requests = wholePipelines(settings.tiny ? Math.min(wanted, 2000) : wanted, inFlight)
      lastRate = await redisBenchmark(server, command, inFlight, requests)
      return lastRate
    },
  }
}

/** Runs part 3 and returns its tables and target checks. */
export async function runRedis(): Promise<PartResult> {
  const durationMs = settings.tiny ? 100 : 1000
  const rounds = settings.tiny ? { rounds: 1, warmup: 0 } : { rounds: 3, warmup: 1 }
  const server = await startRedis()
  const clients: Redis[] = []
  const connections: Connections = {
    clients,
    connect() {
      const client = new Redis({ host: server.host, port: server.port })
      clients.push(client)
      return client
    },
  }
  const admin = connections.connect()
  const rateRows: (string | number)[][] = []
  const ratioRows: (string | number)[][] = []
  const logRows: (string | number)[][] = []
  const targets: TargetCheck[] = []
  try {
    const commands = new Map<AlgorithmName, string[]>()
    for (const algorithm of SLUICE_ALGORITHMS) {
      const call = await captureEvalsha(server, algorithm)
      commands.set(algorithm, call)
    }
    for (const inFlight of IN_FLIGHT) {
      const contenders: Contender[] = [
        ...SLUICE_ALGORITHMS.map((a) => sluiceContender(connections, a, inFlight, durationMs)),
        ...SLUICE_ALGORITHMS.map((a) => sluiceContender(connections, a, inFlight, durationMs, false)),
        ...(await peerContenders(connections, inFlight, durationMs)),
        ...SLUICE_ALGORITHMS.map((a) => ceilingContender(server, a, commands.get(a) as string[], inFlight, durationMs)),
        // The floor answers why 1 in flight has no target (analysis.md): measured there only, where no call is shared.
        ...(inFlight === 1 ? [await floorContender(connections, inFlight, durationMs)] : []),
      ]
      await Promise.all(clients.map((client) => client.ping()))
      const errorsBefore = await unexpectedErrors(admin)
      // RUNS runs of alternating rounds, one after the other: a ratio is reported as the spread of the runs' medians,
      // so a run that a busy machine skewed shows as a wide spread, not as the figure.
      const runs: Map<string, Summary>[] = []
      const redisMicros = new Map<string, RedisTime[]>()
      for (let run = 0; run < RUNS; run++) {
        const runMicros = new Map<string, RedisTime[]>()
        runs.push(
          await alternate(
            contenders.map((c) => withRedisTime(c, admin, runMicros)),
            rounds,
          ),
        )
        for (const [name, times] of runMicros) {
          redisMicros.set(name, [...(redisMicros.get(name) ?? []), ...times.slice(rounds.warmup)])
        }
      }
      const results = new Map(
        contenders.map(({ name }) => [name, summarize(runs.flatMap((run) => pick(run, name).samples))]),
      )
      const ratioOfRuns = (a: string, b: string) =>
        summarize(runs.map((run) => ratio(pick(run, a), pick(run, b)).median))
      const errors = (await unexpectedErrors(admin)) - errorsBefore
      if (errors > 0)
        throw new Error(
          `Redis answered ${errors} errors during the ${inFlight}-in-flight runs: ${await admin.info('errorstats')}`,
        )
      for (const { name } of contenders) {
        const s = pick(results, name)
        const times = redisMicros.get(name) ?? []
        const median = (of: (t: RedisTime) => number) => summarize(times.length > 0 ? times.map(of) : [0]).median
        const perDecision = median((t) => t.perDecision)
        rateRows.push([
          inFlight,
          name,
          s.median,
          s.min,
          s.max,
          median((t) => t.perCall),
          perDecision,
          median((t) => t.batch),
        ])
        if (name === 'sluice fixed-window' && inFlight > 1) {
          const checked = atMost(
            `Redis, ${inFlight} in flight: µs in Redis per sluice fixed-window decision`,
            perDecision,
            MICROS_PER_DECISION,
            'micros',
            WHY_REDIS_TIME,
          )
          targets.push(checked)
        }
      }
      const peers = PEERS.map((name) => ({ name, summary: pick(results, name) }))
      const best = peers.reduce((a, b) => (b.summary.median > a.summary.median ? b : a))
      for (const algorithm of SLUICE_ALGORITHMS) {
        const sluice = `sluice ${algorithm}`
        const rows: [string, Summary, number | undefined][] = [
          ...peers.map((p): [string, Summary, number | undefined] => [
            p.name,
            ratioOfRuns(sluice, p.name),
            p === best ? TARGETS[inFlight] : undefined,
          ]),
          [`redis-benchmark ${algorithm}`, ratioOfRuns(sluice, `redis-benchmark ${algorithm}`), undefined],
          // What coalescing buys: the same store with `coalesce: false`.
          [sluiceName(algorithm, false), ratioOfRuns(sluice, sluiceName(algorithm, false)), undefined],
        ]
        if (inFlight === 1) rows.push([FLOOR, ratioOfRuns(sluice, FLOOR), undefined])
        for (const [over, r, target] of rows) {
          if (target !== undefined) {
            const checked = atLeast(
              `Redis, ${inFlight} in flight: sluice ${algorithm} / the best peer (${over})`,
              r.median,
              target,
              'ratio',
              WHY_COALESCED,
            )
            targets.push(checked)
            ratioRows.push([inFlight, algorithm, over, r.median, r.min, r.max, checked.target, mark(checked)])
          } else {
            ratioRows.push([inFlight, algorithm, over, r.median, r.min, r.max, '', ''])
          }
        }
      }
      if (inFlight === 1) {
        // How near the peer a store can come at all: the floor over the best peer.
        const r = ratioOfRuns(FLOOR, best.name)
        ratioRows.push([inFlight, FLOOR, best.name, r.median, r.min, r.max, '', ''])
      }
    }
    const logs = await slidingLogCosts(connections, admin, settings.tiny ? 20 : 300, settings.tiny ? 1 : 5)
    logRows.push(...logs.rows)
    targets.push(logs.target)
  } finally {
    for (const client of clients) client.disconnect()
    await server.stop()
  }
  const tables: Table[] = [
    {
      title: 'Decisions per second through Redis',
      columns: [
        { header: 'in flight', kind: 'count' },
        { header: 'contender', kind: 'text' },
        ...RATE_COLUMNS,
        { header: 'µs in Redis per script call', kind: 'micros' },
        { header: 'µs in Redis per decision', kind: 'micros' },
        { header: 'decisions per script call', kind: 'count' },
      ],
      rows: rateRows,
    },
    {
      title: 'Sluice over the peers, over redis-benchmark sending one decision per call, and over itself not coalesced',
      columns: [
        { header: 'in flight', kind: 'count' },
        { header: 'sluice', kind: 'text' },
        { header: 'over', kind: 'text' },
        ...RATIO_COLUMNS,
      ],
      rows: ratioRows,
    },
    {
      title: "A sliding log's cost in Redis by its length",
      columns: [
        { header: 'entries in the window', kind: 'count' },
        { header: 'µs in Redis per call, median', kind: 'micros' },
        { header: 'min', kind: 'micros' },
        { header: 'max', kind: 'micros' },
      ],
      rows: logRows,
    },
  ]
  return {
    title: '3. Redis decisions per second (one process, one redis-server)',
    method:
      'One private redis-server on loopback (no persistence). Each contender has its own ioredis connection and ' +
      `keeps 1, 64 or 256 calls in flight over ${KEYS} keys for ${durationMs} ms per round; ${RUNS} runs of ` +
      `${rounds.warmup} warm-up round and ${rounds.rounds} measured, alternating; a rate is over every measured ` +
      "round, a ratio is the median, min and max of the runs' medians of the per-round ratios. Limits: 1e8 per key per day (nothing rejected). " +
      "Sluice: `createLimiter({ algorithm, ..., store: new RedisStore({ client, timeout: 5000, onError: 'closed' }) })`" +
      ' (fixed-window is like for like with both peers, which count fixed windows; sliding-window is the default); ' +
      'the long timeout and closed policy make any slow or failed reply fail the run, so no decision comes from the ' +
      'local fallback. The store coalesces the decisions of one turn of the event loop into one EVALSHA (at most ' +
      '64 per call, MAX_BATCH_REQUESTS in packages/redis/src/batch.ts): "decisions per script call" is how many each call carried. ' +
      '"not coalesced" is the same store with `coalesce: false`: each decision its own EVALSHA, sent as it is made. rate-limiter-flexible: ' +
      '`RateLimiterRedis.consume`; express-rate-limit: rate-limit-redis `RedisStore.increment` over ioredis `call`. ' +
      'redis-benchmark sends the EVALSHA of one Sluice decision (read with MONITOR: same script, same arguments, the ' +
      'key from `-r 10000`) on one connection with 1, 64 or 256 pipelined (`-c 1 -P n`): what Sluice would make ' +
      'without coalescing, with a client that costs nothing. At 1 in flight only, "floor" sends with ioredis `evalsha` ' +
      "the least a fixed-window decision on Redis's clock can do (TIME, a deadline, GET, SET with PXAT, five " +
      'arguments; FLOOR_SCRIPT in bench/src/redis.ts). The run fails if Redis answered any error. "µs in ' +
      'Redis per script call" is the usec of EVALSHA (and EVAL) in INFO commandstats over each round, per call, and ' +
      '"per decision" the same usec over the decisions made: Redis runs one script at a time, so 1 / that time ' +
      'bounds the decisions one Redis server can make. On 2 cores, redis-server and the client process (or ' +
      'redis-benchmark) each have about one. The sliding log: a log of 100, 1,000 or 20,000 entries 1 ms apart, ' +
      "written at once under the store's key in the script's layout, then 300 admitted calls on it one at a time; " +
      'the usec of EVALSHA per call, the median of 5 alternating rounds, the log written again before each.',
    tables,
    targets,
  }
}

/** What Redis spent on a contender's round: µs per script call and per decision, and decisions per call. */
interface RedisTime {
  readonly perCall: number
  readonly perDecision: number
  readonly batch: number
}

/**
 * Wraps a contender so that each round also records the time Redis spent per script call (EVALSHA, or EVAL after
 * a NOSCRIPT) and per decision from INFO commandstats: Redis runs one script at a time, so this bounds what one server
 * can decide.
 */
function withRedisTime(contender: Contender, admin: Redis, times: Map<string, RedisTime[]>): Contender {
  return {
    name: contender.name,
    measure: async () => {
      const before = await commandStats(admin)
      const decisionsBefore = decisionsMade.get(contender.name)
      const rate = await contender.measure()
      const delta = statsBetween(before, await commandStats(admin))
      let calls = 0
      let usec = 0
      for (const command of ['evalsha', 'eval']) {
        calls += delta.get(command)?.calls ?? 0
        usec += delta.get(command)?.usec ?? 0
      }
      // redis-benchmark's decisions are its calls: one each.
      const decisions =
        decisionsBefore === undefined ? calls : (decisionsMade.get(contender.name) ?? 0) - decisionsBefore
      const time: RedisTime = {
        perCall: calls > 0 ? usec / calls : 0,
        perDecision: decisions > 0 ? usec / decisions : 0,
        batch: calls > 0 ? decisions / calls : 0,
      }
      times.set(contender.name, [...(times.get(contender.name) ?? []), time])
      return rate
    },
  }
}

/**
 * Error replies so far, leaving out NOSCRIPT (a client's first EVALSHA before it loads its script). Every client
 * must be connected first: ioredis sends CLIENT SETINFO on connect, which Redis before 7.2 answers with an error.
 */
async function unexpectedErrors(admin: Redis): Promise<number> {
  let total = 0
  for (const match of (await admin.info('errorstats')).matchAll(/^errorstat_([^:]+):count=(\d+)/gm)) {
    if (match[1] !== 'NOSCRIPT') total += Number(match[2])
  }
  return total
}
