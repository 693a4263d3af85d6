// A separate Node process holding its own RedisStore, driven by the parent over IPC: the race and clock-skew
// suites run several of these against one redis-server, as instances behind a load balancer would.
import { type AlgorithmName, createLimiter, type Limiter } from '@sluice/core'
import { RedisStore } from '@sluice/redis'
import Redis from 'ioredis'

export type WorkerCommand =
  | { type: 'round'; algorithm: AlgorithmName; key: string; limit: number; window: string; requests: number }
  | { type: 'naive-round'; key: string; limit: number; requests: number }
  | { type: 'exit' }

export type WorkerReply = { type: 'ready' } | { type: 'done'; admitted: number; clock: number }

// argv: the redis-server's port, and how far this process's own clock is shifted (the clock-skew suite); the
// store must not care about the shift, since Redis keeps the time.
const [port, skew] = process.argv.slice(2)
const skewMs = Number(skew ?? 0)
if (skewMs !== 0) {
  const realNow = Date.now
  Date.now = () => realNow() + skewMs
}

const client = new Redis({ host: '127.0.0.1', port: Number(port) })
const store = new RedisStore({ client, timeout: 5000 })
// One limiter per configuration, as a service builds its limiters once: rounds differ by key.
const limiters = new Map<string, Limiter>()

function send(reply: WorkerReply): void {
  process.send?.(reply)
}

process.on('message', async (command: WorkerCommand) => {
  if (command.type === 'exit') {
    store.close()
    client.disconnect()
    process.disconnect()
    return
  }
  let admitted = 0
  if (command.type === 'round') {
    const { algorithm, limit, window } = command
    const configuration = `${algorithm} ${limit} ${window}`
    let limiter = limiters.get(configuration)
    if (limiter === undefined) {
      limiter = createLimiter({ algorithm, limit, window: window as '1m', store })
      limiters.set(configuration, limiter)
    }
    // Every request at once: they race each other here and the other processes' requests in Redis.
    const decisions = await Promise.all(Array.from({ length: command.requests }, () => limiter.consume(command.key)))
    admitted = decisions.filter((d) => d.allowed).length
  } else {
    // The naive client: read, decide, then write. Between its GET and its INCR other requests read the same count.
    const results = await Promise.all(
      Array.from({ length: command.requests }, async () => {
        const used = Number((await client.get(command.key)) ?? 0)
        if (used >= command.limit) return false
        await client.incr(command.key)
        return true
      }),
    )
    admitted = results.filter(Boolean).length
  }
  send({ type: 'done', admitted, clock: Date.now() })
})

client.once('ready', () => send({ type: 'ready' }))
