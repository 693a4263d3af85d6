// A separate Node process serving HTTP through Express with concurrencyLimit on a RedisLeaseStore, as an instance
// behind a load balancer would. The leases suite starts several on one redis-server and counts, inside the
// handlers, how many requests run at once across all of them.
//
// argv: the redis-server's port, the limit, the lease of /hold in ms.
// GET /count?ms=n  INCR a shared counter in Redis, wait n ms, DECR it; answers the value INCR returned. Its slots
//                  (limiter 'race') have the default 30 s lease: a lease shorter than the longest stall of a loaded
//                  machine would lapse under a request that still runs, and the count would say so.
// GET /hold       runs until the process dies (or /free is called); limiter 'crash', with the short lease.
import type { AddressInfo } from 'node:net'
import { concurrencyLimit } from '@sluice/express'
import { RedisLeaseStore } from '@sluice/redis'
import express from 'express'
import Redis from 'ioredis'

export type LeaseWorkerReply = { type: 'ready'; port: number } | { type: 'holding'; count: number }

const [port = 6379, limit = 1, leaseMs = 30_000] = process.argv.slice(2).map(Number)
const client = new Redis({ host: '127.0.0.1', port })
const counter = new Redis({ host: '127.0.0.1', port })
const store = new RedisLeaseStore({ client, timeout: 5000, onError: 'closed' })
const race = concurrencyLimit({ limit, key: () => 'shared', store, name: 'race' })
const crash = concurrencyLimit({ limit, lease: leaseMs, key: () => 'shared', store, name: 'crash' })
let holding = 0
let free: (() => void)[] = []

const app = express()
app.get('/count', race, async (req, res) => {
  const inside = await counter.incr('inside')
  await new Promise((resolve) => setTimeout(resolve, Number(req.query['ms'] ?? 5)))
  await counter.decr('inside')
  res.json({ inside })
})
app.get('/hold', crash, async (_req, res) => {
  holding++
  process.send?.({ type: 'holding', count: holding } satisfies LeaseWorkerReply)
  await new Promise<void>((resolve) => free.push(resolve))
  res.json({ held: true })
})
app.get('/free', (_req, res) => {
  for (const resolve of free) resolve()
  free = []
  res.json({ freed: true })
})

const server = app.listen(0, '127.0.0.1', () => {
  process.send?.({ type: 'ready', port: (server.address() as AddressInfo).port } satisfies LeaseWorkerReply)
})
process.on('message', (message: { type: string }) => {
  if (message.type !== 'exit') return
  server.closeAllConnections()
  server.close()
  client.disconnect()
  counter.disconnect()
  process.disconnect()
})
