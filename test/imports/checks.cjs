// What both consumers check, given the packages as loaded in their own module format (`own`) and in the other one
// (`other`). An app can hold both builds at once (it `import`s one package while a dependency `require`s another),
// so a class of one build must be recognised by the other, and every class keeps its name in both.
const { createServer } = require('node:http')
const { inspect } = require('node:util')

/** The entries a consumer loads, by the name it loads them by. */
const ENTRIES = [
  '@sluice/core',
  '@sluice/core/store',
  '@sluice/core/internal',
  '@sluice/redis',
  '@sluice/client',
  '@sluice/express',
  '@sluice/express/compat',
  '@sluice/koa',
  '@sluice/fastify',
]

function isClass(value) {
  return typeof value === 'function' && Function.prototype.toString.call(value).startsWith('class')
}

/** `entry.Export=name` for every class an entry exports: a name lost in a build shows as `Export=_class3`. */
function classNames(modules) {
  return ENTRIES.flatMap((entry) =>
    Object.entries(modules[entry])
      .filter(([, value]) => isClass(value))
      .map(([exported, value]) => `${entry}.${exported}=${value.name}`),
  ).sort()
}

/** One instance of every error class the packages export, made by a module format's own classes. */
function errorsOf(modules) {
  const core = modules['@sluice/core']
  const client = modules['@sluice/client']
  const decision = { costExceedsCapacity: false, rule: 'default', retryAfterMs: 1000 }
  return {
    InvalidOptionError: new core.InvalidOptionError('limit', 'must be a positive whole number (got 0)'),
    StoreUnavailableError: new core.StoreUnavailableError('the store is down'),
    StoreKeyError: new core.StoreKeyError('the key holds a list', 'user:1', 'default'),
    RateLimitError: new core.RateLimitError(decision),
    ClientOptionError: new client.ClientOptionError('maxAttempts', 'must be at least 1'),
    WaitTooLongError: new client.WaitTooLongError(new Response(null, { status: 429 }), 60_000, 1_000, 'retry-after'),
    CircuitOpenError: new client.CircuitOpenError('open', 1_000),
    RetryBudgetExhaustedError: new client.RetryBudgetExhaustedError(2, new Error('ECONNRESET')),
    ThrottledError: new client.ThrottledError(0.5, 1),
  }
}

/** For each error made by `other`'s classes, the names of `own`'s error classes it is an `instanceof`. */
function recognisedAcross(own, other) {
  const ownClasses = errorsOf(own)
  return Object.fromEntries(
    Object.entries(errorsOf(other)).map(([name, error]) => [
      name,
      Object.keys(ownClasses).filter((candidate) => {
        const entry = candidate in own['@sluice/core'] ? own['@sluice/core'] : own['@sluice/client']
        return error instanceof entry[candidate]
      }),
    ]),
  )
}

/** A store whose every decision fails with `error`: a store that chose to fail closed (RedisStore onError 'closed'). */
function failingStore(error) {
  return {
    bind(rules) {
      return {
        rules,
        apply: () => Promise.reject(error),
        refund: () => Promise.resolve(),
        reset: () => Promise.resolve(),
      }
    },
  }
}

function listen(server) {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)))
}

async function statuses(url, times) {
  const answered = []
  for (let i = 0; i < times; i++) answered.push((await fetch(url)).status)
  return answered
}

/** Serves `limit` (a middleware or plugin options, per framework) on one real server each, and asks `times`. */
async function serve({ express, Koa, Fastify }, own, options, times) {
  const results = {}
  const expressApp = express()
  expressApp.use(own['@sluice/express'].rateLimit(options))
  expressApp.get('/', (req, res) => res.json({ remaining: req.rateLimit?.remaining ?? null }))
  const expressServer = await listen(createServer(expressApp))
  results.express = await statuses(`http://127.0.0.1:${expressServer.address().port}/`, times)
  expressServer.close()

  const koaApp = new Koa()
  koaApp.use(own['@sluice/koa'].rateLimit(options))
  koaApp.use((ctx) => {
    ctx.body = { remaining: ctx.state.rateLimit?.remaining ?? null }
  })
  const koaServer = await listen(createServer(koaApp.callback()))
  results.koa = await statuses(`http://127.0.0.1:${koaServer.address().port}/`, times)
  koaServer.close()

  const fastifyApp = Fastify()
  await fastifyApp.register(own['@sluice/fastify'].rateLimit, options)
  fastifyApp.get('/', async (request) => ({ remaining: request.rateLimit?.remaining ?? null }))
  const address = await fastifyApp.listen({ port: 0, host: '127.0.0.1' })
  results.fastify = await statuses(`${address}/`, times)
  await fastifyApp.close()
  return results
}

/**
 * Everything a consumer prints: see expected.json.
 *
 * @param frameworks `{ express, Koa, Fastify }` as the consumer loaded them
 * @param own the packages by entry name, in the consumer's module format
 * @param other the same packages in the other module format
 */
async function check(frameworks, own, other) {
  const core = own['@sluice/core']
  const protect = ['@sluice/express', '@sluice/koa', '@sluice/fastify'].flatMap((name) => [
    own[name].shedLoad,
    own[name].concurrencyLimit,
  ])
  const errors = errorsOf(own)
  return {
    fastifyDefaultIsPlugin: own['@sluice/fastify'].default === own['@sluice/fastify'].rateLimit,
    // The store authors' entry shares its classes with the main one, so `instanceof` holds across the two.
    storeEntryShared: own['@sluice/core/store'].StoreUnavailableError === core.StoreUnavailableError,
    protectExports: protect.every((f) => typeof f === 'function'),
    limited: await serve(frameworks, own, { limit: 1, window: '1m' }, 2),
    // The drop-in for express-rate-limit users: its options, its default export.
    expressCompat: await compatLimited(frameworks.express, own['@sluice/express/compat']),
    compatDefault: own['@sluice/express/compat'].default === own['@sluice/express/compat'].rateLimit,
    // onError 'open' admits when the store fails, except when the store chose to fail closed: a StoreUnavailableError,
    // here thrown by the other module format's class.
    failClosedAcrossFormats: await serve(
      frameworks,
      own,
      {
        limit: 1,
        window: '1m',
        onError: 'open',
        store: failingStore(new other['@sluice/core'].StoreUnavailableError('down')),
        logger: { warn() {}, error() {} },
      },
      1,
    ),
    classNames: classNames(own),
    // What Express's router stack, stack traces and APM spans show of a middleware: its factory's name, not the
    // bundler's `rateLimit2` (the packages are built without keep-names).
    middlewareNames: middlewareNames(own),
    errorNames: Object.fromEntries(Object.entries(errors).map(([name, error]) => [name, error.name])),
    errorCodes: Object.fromEntries(Object.entries(errors).map(([name, error]) => [name, error.code])),
    // How a log prints it: `_class [InvalidOptionError]` when the class lost its name.
    inspected: inspect(errors.InvalidOptionError).split('\n')[0],
    recognisedAcrossFormats: recognisedAcross(own, other),
    // The SHA-256 the events carry, from Node's crypto found through process.getBuiltinModule.
    keyHash: core.keyHash('user:42'),
    // The events reach a subscriber of Node's diagnostics channel on every version (found the same way).
    decisionEvents: await decisionEvents(core),
  }
}

/** `entry.factory=name` of the middleware each adapter's factory makes. */
function middlewareNames(own) {
  const made = {
    '@sluice/express.rateLimit': own['@sluice/express'].rateLimit({ limit: 1, window: '1m' }),
    '@sluice/express.shedLoad': own['@sluice/express'].shedLoad({ maxInFlight: 1 }),
    '@sluice/express.concurrencyLimit': own['@sluice/express'].concurrencyLimit({ limit: 1 }),
    '@sluice/express/compat.rateLimit': own['@sluice/express/compat'].rateLimit({ limit: 1 }),
    '@sluice/koa.rateLimit': own['@sluice/koa'].rateLimit({ limit: 1, window: '1m' }),
    '@sluice/koa.shedLoad': own['@sluice/koa'].shedLoad({ maxInFlight: 1 }),
    '@sluice/koa.concurrencyLimit': own['@sluice/koa'].concurrencyLimit({ limit: 1 }),
  }
  return Object.entries(made).map(([factory, middleware]) => `${factory}=${middleware.name}`)
}

/** Two requests through the compat entry's rateLimit({ limit: 1 }) (express-rate-limit's options): their statuses. */
async function compatLimited(express, compat) {
  const app = express()
  app.use(compat.rateLimit({ limit: 1 }))
  app.get('/', (req, res) => res.json({ remaining: req.rateLimit.remaining }))
  const server = await listen(createServer(app))
  try {
    const url = `http://127.0.0.1:${server.address().port}/`
    const statuses = []
    for (let i = 0; i < 2; i++) statuses.push((await fetch(url)).status)
    return statuses
  } finally {
    server.close()
  }
}

/** The rule and key hash of each `sluice:decision` event two consumes publish. */
async function decisionEvents(core) {
  const { subscribe, unsubscribe } = require('node:diagnostics_channel')
  const seen = []
  const listener = (event) => seen.push(`${event.rules[0].rule}:${event.rules[0].keyHash}:${event.allowed}`)
  subscribe('sluice:decision', listener)
  try {
    const limiter = core.createLimiter({ limit: 1, window: '1m' })
    await limiter.consume('user:42')
    await limiter.consume('user:42')
  } finally {
    unsubscribe('sluice:decision', listener)
  }
  return seen
}

module.exports = { ENTRIES, check }
