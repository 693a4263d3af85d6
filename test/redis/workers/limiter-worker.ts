// A separate Node process holding its own RedisStore, as instances behind a load balancer would: an Express server
// with one rate limit per algorithm (the race suite sends it HTTP requests), and rounds driven over IPC (the clock-skew
// suite). Several of these run against one redis-server.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { type AlgorithmName, createLimiter, type Limiter } from '@sluice/core'
import { rateLimit } from '@sluice/express'
import { RedisStore } from '@sluice/redis'
import express from 'express'
import { type ClientKind, kindClient } from '../../../scripts/redis-clients'
import { STARVED_REDIS_TIMEOUT_MS } from '../../../scripts/redis-suite'
import { HTTP_ALGORITHMS, HTTP_LIMIT } from './http-routes'

export type WorkerCommand =
  | { type: 'round'; algorithm: AlgorithmName; key: string; limit: number; window: string; requests: number }
  | { type: 'naive-round'; key: string; limit: number; requests: number }
  | { type: 'warnings' }
  | { type: 'exit' }

export type WorkerReply =
  | { type: 'ready'; httpPort: number }
  | { type: 'done'; admitted: number; clock: number }
  | { type: 'warnings'; warnings: string[] }

// What this process's store and limiters warned about, on their default logger (console): still printed, and kept
// for the suites to ask for.
const warnings: string[] = []
const warn = console.warn.bind(console)
console.warn = (...args: unknown[]) => {
  warnings.push(args.map(String).join(' '))
  warn(...args)
}

// argv: the redis-server's port, how far this process's own clock is shifted (the clock-skew suite; the store must
// not care about the shift, since Redis keeps the time), and the library of the store's client.
const [port, skew, kind = 'ioredis'] = process.argv.slice(2)
const skewMs = Number(skew ?? 0)
if (skewMs !== 0) {
  const realNow = Date.now
  Date.now = () => realNow() + skewMs
}

/**
 * The instance: its client as the README recommends it, connected before it listens; the store with its defaults
 * but the timeout. The suites here test what one script per request decides across processes, not deadlines (the
 * outage suites do): with the default 100 ms, a redis-server starved on a loaded machine was declared down mid-round
 * and every instance then decided from local memory, by design (`onError: 'local'`), admitting 82 of a limit of 50.
 * An outage is still reported: the store warns, and the suites read the warnings.
 */
async function main(): Promise<void> {
  const client = await kindClient(kind as ClientKind, Number(port))
  const store = new RedisStore({ client: client.client, timeout: STARVED_REDIS_TIMEOUT_MS })
  // The naive round's GET and INCR: both libraries name them alike.
  const commands = client.client as unknown as {
    get(key: string): Promise<string | null>
    incr(key: string): Promise<number>
  }

  const app = express()
  // `?block=<ms>` holds this instance's event loop for that long once the request's own limiter call is on its way,
  // as a slow handler or a GC pause would while the rest of the burst waits for Redis.
  app.use((req, _res, next) => {
    const blockMs = Number(req.query['block'] ?? 0)
    next()
    const until = performance.now() + blockMs
    while (performance.now() < until) {}
  })
  for (const algorithm of HTTP_ALGORITHMS) {
    app.get(
      `/${algorithm}`,
      rateLimit({ algorithm, limit: HTTP_LIMIT, window: '1h', store, key: (req) => String(req.query['key']) }),
      (_req, res) => {
        res.send('ok')
      },
    )
  }
  const server = createServer(app)

  // One limiter per configuration, as a service builds its limiters once: rounds differ by key.
  const limiters = new Map<string, Limiter>()

  process.on('message', async (command: WorkerCommand) => {
    if (command.type === 'exit') {
      store.close()
      client.close()
      server.close()
      process.disconnect()
      return
    }
    if (command.type === 'warnings') {
      send({ type: 'warnings', warnings })
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
          const used = Number((await commands.get(command.key)) ?? 0)
          if (used >= command.limit) return false
          await commands.incr(command.key)
          return true
        }),
      )
      admitted = results.filter(Boolean).length
    }
    send({ type: 'done', admitted, clock: Date.now() })
  })

  // The test's fetch keeps connections alive between rounds, which can be seconds apart on a loaded machine: a server
  // closing an idle connection (5 s by default) just as the client reuses it fails that request with "other side
  // closed", which is no answer of the limiter's.
  server.keepAliveTimeout = 120_000
  server.listen(0, '127.0.0.1', () => send({ type: 'ready', httpPort: (server.address() as AddressInfo).port }))
}

function send(reply: WorkerReply): void {
  process.send?.(reply)
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
