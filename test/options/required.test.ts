// Every required option, left out, is named with "is required": the first thing a new user does is call a factory
// with too little, and "must be a positive whole number (got undefined)" reads as if they had passed something wrong.
import {
  createConcurrencyLimiter,
  createLimiter,
  createShedder,
  InvalidOptionError,
  type LimiterOptions,
  type ShedderOptions,
} from '@sluice/core'
import {
  concurrencyLimit as expressConcurrencyLimit,
  rateLimit as expressRateLimit,
  shedLoad as expressShedLoad,
} from '@sluice/express'
import {
  concurrencyLimit as fastifyConcurrencyLimit,
  rateLimit as fastifyRateLimit,
  shedLoad as fastifyShedLoad,
} from '@sluice/fastify'
import {
  concurrencyLimit as koaConcurrencyLimit,
  rateLimit as koaRateLimit,
  shedLoad as koaShedLoad,
} from '@sluice/koa'
import { RedisLeaseStore, type RedisLeaseStoreOptions, RedisStore, type RedisStoreOptions } from '@sluice/redis'
import Fastify, { type FastifyInstance } from 'fastify'

/** The error a construction throws, or a failure when it does not throw one. */
async function refusal(build: () => unknown): Promise<InvalidOptionError> {
  try {
    await build()
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidOptionError)
    return error as InvalidOptionError
  }
  throw new Error('expected the options to be refused')
}

/** Builds a Fastify app the way `setup` registers its plugins, and waits for Fastify to load them. */
async function fastifyApp(setup: (app: FastifyInstance) => unknown): Promise<void> {
  const app = Fastify()
  try {
    await setup(app)
    await app.ready()
  } finally {
    await app.close()
  }
}

const nothing = {} as never

// Each mistake below is a compile error too (see test/types): these check what JavaScript gets at run time.
test.each<[string, () => unknown, string, string]>([
  ['createLimiter({})', () => createLimiter(nothing as LimiterOptions), 'limit', 'is required (or give `rules`)'],
  // @ts-expect-error a window is required
  ['createLimiter without a window', () => createLimiter({ limit: 5 }), 'window', 'is required'],
  [
    'a bucket without a window or a rate',
    // @ts-expect-error a bucket needs a window or a rate
    () => createLimiter({ algorithm: 'token-bucket', limit: 5 }),
    'window',
    'is required (or give a rate)',
  ],
  [
    'a rule without a limit',
    () =>
      createLimiter({
        rules: [{ name: 'user', limit: 100, window: '1m' }, { name: 'tenant', window: '1m' } as never],
      }),
    'rules[1].limit',
    'is required',
  ],
  [
    'a rule without a window',
    // @ts-expect-error a rule needs a window
    () => createLimiter({ rules: [{ name: 'user', limit: 100 }] }),
    'rules[0].window',
    'is required',
  ],
  [
    'an unnamed rule among several',
    () =>
      createLimiter({
        rules: [
          { name: 'user', limit: 100, window: '1m' },
          { limit: 2000, window: '1m' },
        ],
      }),
    'rules[1].name',
    'is required when there are several rules',
  ],
  ['createShedder({})', () => createShedder(nothing as ShedderOptions), 'maxInFlight', 'is required'],
  [
    'createConcurrencyLimiter({})',
    () => createConcurrencyLimiter(nothing),
    'limit',
    'is required (or `globalLimit`, or both)',
  ],
  ['Express rateLimit({})', () => expressRateLimit(nothing), 'limit', 'is required (or give `rules`)'],
  ['Express shedLoad({})', () => expressShedLoad(nothing), 'maxInFlight', 'is required'],
  [
    'Express concurrencyLimit({})',
    () => expressConcurrencyLimit(nothing),
    'limit',
    'is required (or `globalLimit`, or both)',
  ],
  ['Koa rateLimit({})', () => koaRateLimit(nothing), 'limit', 'is required (or give `rules`)'],
  ['Koa shedLoad({})', () => koaShedLoad(nothing), 'maxInFlight', 'is required'],
  ['Koa concurrencyLimit({})', () => koaConcurrencyLimit(nothing), 'limit', 'is required (or `globalLimit`, or both)'],
  [
    'the Fastify rateLimit plugin with {}',
    () => fastifyApp((app) => app.register(fastifyRateLimit, nothing)),
    'limit',
    'is required (or give `rules`)',
  ],
  [
    'the Fastify shedLoad plugin with {}',
    () => fastifyApp((app) => app.register(fastifyShedLoad, nothing)),
    'maxInFlight',
    'is required',
  ],
  [
    'the Fastify concurrencyLimit plugin with {}',
    () => fastifyApp((app) => app.register(fastifyConcurrencyLimit, nothing)),
    'limit',
    'is required (or `globalLimit`, or both)',
  ],
  [
    'new RedisStore({})',
    () => new RedisStore(nothing as RedisStoreOptions),
    'client',
    'is required: an ioredis Redis or Cluster, or a node-redis client or cluster',
  ],
  [
    'new RedisLeaseStore({})',
    () => new RedisLeaseStore(nothing as RedisLeaseStoreOptions),
    'client',
    'is required: an ioredis Redis or Cluster, or a node-redis client or cluster',
  ],
])('%s: the missing option is named "is required"', async (_name, build, option, detail) => {
  const error = await refusal(build)
  expect(error.option).toBe(option)
  expect(error.message).toBe(`sluice: option "${option}" ${detail}`)
})

test('rateLimit({}) says "limit" is required, not that undefined is not a positive whole number', () => {
  expect(() => expressRateLimit(nothing)).toThrow('sluice: option "limit" is required (or give `rules`)')
  expect(() => expressRateLimit(nothing)).not.toThrow(/got undefined/)
})

test('an option given with a wrong value is still described by what it accepts', async () => {
  expect((await refusal(() => createLimiter({ limit: 0, window: '1m' }))).message).toBe(
    'sluice: option "limit" must be a positive whole number (got 0)',
  )
  expect((await refusal(() => new RedisStore({ client: 42 } as never))).message).toMatch(
    /^sluice: option "client" must be an ioredis Redis or Cluster, or a node-redis client or cluster .*\(got 42\)$/,
  )
})
