// Loads each adapter the way an ES module app does, then limits one real server per framework: 200, then 429.
import { createServer } from 'node:http'
import { StoreUnavailableError } from '@sluice/core'
import { StoreUnavailableError as StoreEntryUnavailableError } from '@sluice/core/store'
import {
  concurrencyLimit as expressConcurrency,
  rateLimit as expressRateLimit,
  shedLoad as expressShed,
} from '@sluice/express'
import compatDefault, { rateLimit as compatRateLimit } from '@sluice/express/compat'
import fastifyDefault, {
  concurrencyLimit as fastifyConcurrency,
  rateLimit as fastifyRateLimit,
  shedLoad as fastifyShed,
} from '@sluice/fastify'
import { concurrencyLimit as koaConcurrency, rateLimit as koaRateLimit, shedLoad as koaShed } from '@sluice/koa'
import express from 'express'
import Fastify from 'fastify'
import Koa from 'koa'

async function twice(url) {
  const statuses = []
  for (let i = 0; i < 2; i++) statuses.push((await fetch(url)).status)
  return statuses
}

function listen(server) {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)))
}

const results = {
  fastifyDefaultIsPlugin: fastifyDefault === fastifyRateLimit,
  // The store authors' entry shares its classes with the main one, so `instanceof` holds across the two.
  storeEntryShared: StoreEntryUnavailableError === StoreUnavailableError,
  protectExports: [expressShed, expressConcurrency, koaShed, koaConcurrency, fastifyShed, fastifyConcurrency].every(
    (f) => typeof f === 'function',
  ),
}

const expressApp = express()
expressApp.use(expressRateLimit({ limit: 1, window: '1m' }))
expressApp.get('/', (req, res) => res.json({ remaining: req.rateLimit.remaining }))
const expressServer = await listen(createServer(expressApp))
results.express = await twice(`http://127.0.0.1:${expressServer.address().port}/`)
expressServer.close()

const compatApp = express()
compatApp.use(compatRateLimit({ limit: 1 }))
compatApp.get('/', (req, res) => res.json({ remaining: req.rateLimit.remaining }))
const compatServer = await listen(createServer(compatApp))
results.expressCompat = await twice(`http://127.0.0.1:${compatServer.address().port}/`)
results.compatDefault = compatDefault === compatRateLimit
compatServer.close()

const koaApp = new Koa()
koaApp.use(koaRateLimit({ limit: 1, window: '1m' }))
koaApp.use((ctx) => {
  ctx.body = { remaining: ctx.state.rateLimit.remaining }
})
const koaServer = await listen(createServer(koaApp.callback()))
results.koa = await twice(`http://127.0.0.1:${koaServer.address().port}/`)
koaServer.close()

const fastifyApp = Fastify()
await fastifyApp.register(fastifyRateLimit, { limit: 1, window: '1m' })
fastifyApp.get('/', async (request) => ({ remaining: request.rateLimit.remaining }))
const address = await fastifyApp.listen({ port: 0, host: '127.0.0.1' })
results.fastify = await twice(`${address}/`)
await fastifyApp.close()

console.log(JSON.stringify(results))
