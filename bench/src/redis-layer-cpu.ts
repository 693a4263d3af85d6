// Node CPU per decision of Sluice's own layers over Redis (limiter, binding, node health and deadlines, batches,
// reply decoding), with a client that answers at once from memory: no socket, no ioredis, so the figure is steady on a
// busy machine and shows the fixed costs a change cuts. Not a comparison with any peer (redis-cpu-driver.ts is).
// `IN_FLIGHT=1,64 npx tsx src/redis-layer-cpu.ts`
import { createLimiter } from '@sluice/core'
import { RedisStore } from '@sluice/redis'

const inFlights = (process.env['IN_FLIGHT'] ?? '1,64').split(',').map(Number)
const decisions = Number(process.env['DECISIONS'] ?? 200_000)
const rounds = Number(process.env['ROUNDS'] ?? 5)

// main.lua's arguments after the keys: extra ttl, deadline, the rule sets' count, one fixed-window set (its rule count
// and six numbers), then four per request. Its reply: five numbers per request, then Redis's time in ms.
const FIXED_ARGS = 3 + 7
const ARGS_PER_REQUEST = 4

const client = {
  status: 'ready',
  evalsha(_sha: string, numKeys: number, ...args: (string | number)[]): Promise<unknown> {
    const requests = (args.length - numKeys - FIXED_ARGS) / ARGS_PER_REQUEST
    const reply: number[] = []
    for (let i = 0; i < requests; i++) reply.push(1, 99, 60_000, 0, 0)
    reply.push(Date.now())
    return Promise.resolve(reply)
  },
  eval: (): Promise<unknown> => Promise.resolve(1),
  del: (): Promise<unknown> => Promise.resolve(0),
}

async function cpuPerDecision(inFlight: number, op: (i: number) => Promise<unknown>): Promise<number> {
  let n = 0
  const start = process.cpuUsage()
  const worker = async () => {
    while (n < decisions) await op(n++)
  }
  await Promise.all(Array.from({ length: inFlight }, worker))
  const cpu = process.cpuUsage(start)
  return (cpu.user + cpu.system) / n
}

async function main() {
  const quiet = { warn() {}, error() {} }
  const limiter = createLimiter({
    algorithm: 'fixed-window',
    limit: 100,
    window: 60_000,
    store: new RedisStore({ client, timeout: 1000, onError: 'closed', logger: quiet }),
  })
  const key = (i: number) => `user:${String(i % 10_000).padStart(12, '0')}`
  const op = (i: number) => limiter.consume(key(i))
  for (const inFlight of inFlights) {
    await cpuPerDecision(inFlight, op)
    const micros: number[] = []
    for (let r = 0; r < rounds; r++) micros.push(await cpuPerDecision(inFlight, op))
    micros.sort((a, b) => a - b)
    const [min, max] = [micros[0] as number, micros[micros.length - 1] as number]
    const median = micros[Math.floor(micros.length / 2)] as number
    console.log(
      `${inFlight} in flight: CPU µs per decision of Sluice's layers, median ${median.toFixed(2)} (min ${min.toFixed(2)}, max ${max.toFixed(2)})`,
    )
  }
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
