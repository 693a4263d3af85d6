// Loads each adapter the way a CommonJS app does, then limits one real server per framework: 200, then 429.
const express = require('express')
const Koa = require('koa')
const Fastify = require('fastify')
const { rateLimit: expressRateLimit } = require('@sluice/express')
const { rateLimit: koaRateLimit } = require('@sluice/koa')
const { rateLimit: fastifyRateLimit } = require('@sluice/fastify')
const fastifyDefault = require('@sluice/fastify').default
const protect = ['express', 'koa', 'fastify'].flatMap((name) => {
  const adapter = require(`@sluice/${name}`)
  return [adapter.shedLoad, adapter.concurrencyLimit]
})

async function twice(url) {
  const statuses = []
  for (let i = 0; i < 2; i++) statuses.push((await fetch(url)).status)
  return statuses
}

function listen(server) {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)))
}

async function main() {
  const results = {
    fastifyDefaultIsPlugin: fastifyDefault === fastifyRateLimit,
    // The store authors' entry shares its classes with the main one, so `instanceof` holds across the two.
    storeEntryShared:
      require('@sluice/core/store').StoreUnavailableError === require('@sluice/core').StoreUnavailableError,
    protectExports: protect.every((f) => typeof f === 'function'),
  }

  const expressApp = express()
  expressApp.use(expressRateLimit({ limit: 1, window: '1m' }))
  expressApp.get('/', (req, res) => res.json({ remaining: req.rateLimit.remaining }))
  const expressServer = await listen(require('node:http').createServer(expressApp))
  results.express = await twice(`http://127.0.0.1:${expressServer.address().port}/`)
  expressServer.close()

  const compat = require('@sluice/express/compat')
  const compatApp = express()
  compatApp.use(compat.rateLimit({ limit: 1 }))
  compatApp.get('/', (req, res) => res.json({ remaining: req.rateLimit.remaining }))
  const compatServer = await listen(require('node:http').createServer(compatApp))
  results.expressCompat = await twice(`http://127.0.0.1:${compatServer.address().port}/`)
  results.compatDefault = compat.default === compat.rateLimit
  compatServer.close()

  const koaApp = new Koa()
  koaApp.use(koaRateLimit({ limit: 1, window: '1m' }))
  koaApp.use((ctx) => {
    ctx.body = { remaining: ctx.state.rateLimit.remaining }
  })
  const koaServer = await listen(require('node:http').createServer(koaApp.callback()))
  results.koa = await twice(`http://127.0.0.1:${koaServer.address().port}/`)
  koaServer.close()

  const fastifyApp = Fastify()
  await fastifyApp.register(fastifyRateLimit, { limit: 1, window: '1m' })
  fastifyApp.get('/', async (request) => ({ remaining: request.rateLimit.remaining }))
  const address = await fastifyApp.listen({ port: 0, host: '127.0.0.1' })
  results.fastify = await twice(`${address}/`)
  await fastifyApp.close()

  console.log(JSON.stringify(results))
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
