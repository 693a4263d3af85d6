// Compiled with `strict` against the packed types, as an ES module (the `import` conditions: the .d.mts files).
// Every name is used as an app would, so a type that went missing or turned into `any` fails the compile.
import { createPoliteFetch, parseRateLimitHeaders, WaitTooLongError } from '@sluice/client'
import {
  createLimiter,
  type Decision,
  InvalidOptionError,
  MemoryStore,
  type SluiceErrorCode,
  StoreUnavailableError,
} from '@sluice/core'
import type { Store } from '@sluice/core/store'
import { rateLimit as expressRateLimit, shedLoad } from '@sluice/express'
import fastifyRateLimit from '@sluice/fastify'
import { rateLimit as koaRateLimit } from '@sluice/koa'
import { RedisStore } from '@sluice/redis'
import express from 'express'
import Fastify from 'fastify'
import Koa from 'koa'

const limiter = createLimiter({ algorithm: 'token-bucket', limit: 10, window: '1s', store: new MemoryStore() })
export const decide = (key: string): Promise<Decision> => limiter.consume(key)
export const storeOf = (client: ConstructorParameters<typeof RedisStore>[0]['client']): Store =>
  new RedisStore({ client })

const app = express()
app.use(shedLoad({ maxInFlight: 64 }))
app.use(expressRateLimit({ limit: 100, window: '1m' }))
app.get('/', (req, res) => {
  const remaining: number | undefined = req.rateLimit?.remaining
  res.json({ remaining })
})

const koa = new Koa()
koa.use(koaRateLimit({ limit: 100, window: '1m' }))
koa.use((ctx) => {
  const decision: Decision | undefined = ctx.state.rateLimit
  ctx.body = { remaining: decision?.remaining }
})

const fastify = Fastify()
void fastify.register(fastifyRateLimit, { limit: 100, window: '1m' })
fastify.get('/health', { config: { rateLimit: false } }, async (request) => request.rateLimit?.remaining ?? null)

export function codeOf(error: unknown): SluiceErrorCode | 'other' {
  if (error instanceof InvalidOptionError) return error.code
  if (error instanceof StoreUnavailableError) return error.code
  return 'other'
}

export const politeFetch = createPoliteFetch({ maxAttempts: 3 })
export const tooLong = (error: unknown): number | undefined =>
  error instanceof WaitTooLongError ? error.waitMs : undefined
export const quota = parseRateLimitHeaders(new Headers({ RateLimit: '"default";r=5;t=10' }))

// @ts-expect-error: the types refuse an algorithm that does not exist (they are not `any`)
createLimiter({ algorithm: 'fastest', limit: 1, window: '1s' })
