// The shapes of express-rate-limit 8 that an application or a store author writes against, so that code typed for
// it type-checks against @sluice/express/compat unchanged.
import type { Store as SluiceStore } from '@sluice/core'
import type { NextFunction, Request, RequestHandler, Response } from 'express'

/**
 * A value an option computes from the request: returned as it is or as a promise.
 *
 * @example
 * const limit: ValueDeterminingMiddleware<number> = (req) => (req.get('x-plan') === 'pro' ? 1000 : 100)
 */
export type ValueDeterminingMiddleware<T> = (request: Request, response: Response) => T | Promise<T>

/**
 * What a store tells about one key: its hits in the current window and when that window ends.
 *
 * @example
 * const info: ClientRateLimitInfo = { totalHits: 3, resetTime: new Date(Date.now() + 60_000) }
 */
export interface ClientRateLimitInfo {
  totalHits: number
  resetTime: Date | undefined
}

/**
 * What `increment` answers.
 *
 * @example
 * const counted: IncrementResponse = { totalHits: 1, resetTime: undefined }
 */
export type IncrementResponse = ClientRateLimitInfo

/**
 * The callback of a legacy store's `incr`.
 *
 * @example
 * const done: IncrementCallback = (error, totalHits) => console.log(error ?? totalHits)
 */
export type IncrementCallback = (error: Error | undefined, totalHits: number, resetTime: Date | undefined) => void

/**
 * A store of express-rate-limit's interface: rate-limit-redis, rate-limit-postgresql, rate-limit-memcached, the
 * MemoryStore of express-rate-limit or of this module.
 *
 * @example
 * import { RedisStore } from 'rate-limit-redis'
 * const store: Store = new RedisStore({ sendCommand: (...args: string[]) => client.sendCommand(args) })
 */
export interface Store {
  init?: (options: Options) => void | Promise<void>
  get?: (key: string) => Promise<ClientRateLimitInfo | undefined> | ClientRateLimitInfo | undefined
  increment: (key: string) => Promise<IncrementResponse> | IncrementResponse
  decrement: (key: string) => Promise<void> | void
  resetKey: (key: string) => Promise<void> | void
  resetAll?: () => Promise<void> | void
  shutdown?: () => Promise<void> | void
  /** True when the keys of this instance are its own (a memory store), false or absent when shared (Redis). */
  localKeys?: boolean
  prefix?: string
}

/**
 * A store of the callback interface from before express-rate-limit 6 (`incr` rather than `increment`).
 *
 * @example
 * const legacy: LegacyStore = { incr: (key, done) => done(undefined, 1, undefined), decrement() {}, resetKey() {} }
 */
export interface LegacyStore {
  incr: (key: string, callback: IncrementCallback) => void
  decrement: (key: string) => void
  resetKey: (key: string) => void
  resetAll?: () => void
}

/**
 * Where the limiter reports misconfigurations and store errors, called as express-rate-limit calls it: the error
 * first, then a message. `console` fits.
 *
 * @example
 * const logger: Logger = { warn: (error) => log.warn({ err: error }), error: (error, message) => log.error({ err: error }, message) }
 */
export interface Logger {
  error: (error: unknown, message?: string) => void
  warn: (error: unknown, message?: string) => void
}

/**
 * The IETF draft whose fields `standardHeaders` writes.
 *
 * @example
 * const version: DraftHeadersVersion = 'draft-8'
 */
export type DraftHeadersVersion = 'draft-6' | 'draft-7' | 'draft-8'

/**
 * The checks of `validate`, each on (the default) or off.
 *
 * @example
 * const checks: EnabledValidations = { trustProxy: false, xForwardedForHeader: false }
 */
export type EnabledValidations = Partial<Record<ValidationName | 'default', boolean>>

/**
 * The names of the checks `validate` turns on and off: express-rate-limit's names.
 *
 * @example
 * const name: ValidationName = 'singleCount'
 */
export type ValidationName =
  | 'ip'
  | 'trustProxy'
  | 'xForwardedForHeader'
  | 'forwardedHeader'
  | 'positiveHits'
  | 'unsharedStore'
  | 'singleCount'
  | 'limit'
  | 'draftPolliHeaders'
  | 'onLimitReached'
  | 'headersDraftVersion'
  | 'headersResetTime'
  | 'knownOptions'
  | 'validationsConfig'
  | 'creationStack'
  | 'ipv6Subnet'
  | 'ipv6SubnetOrKeyGenerator'
  | 'keyGeneratorIpFallback'
  | 'windowMs'

/**
 * The Sluice algorithms a compat limiter can count with (see `algorithm`).
 *
 * @example
 * const algorithm: CompatAlgorithm = 'sliding-window'
 */
export type CompatAlgorithm = 'fixed-window' | 'sliding-log' | 'sliding-window' | 'token-bucket' | 'leaky-bucket'

/**
 * The options of {@link rateLimit}: express-rate-limit 8's, with their defaults, and three of Sluice's.
 *
 * @example
 * const options: Partial<Options> = { windowMs: 15 * 60 * 1000, limit: 100, standardHeaders: 'draft-8' }
 */
export interface Options {
  windowMs: number
  limit: number | ValueDeterminingMiddleware<number>
  // biome-ignore lint/suspicious/noExplicitAny: express-rate-limit sends whatever the message is (res.send).
  message: any | ValueDeterminingMiddleware<any>
  statusCode: number
  legacyHeaders: boolean
  standardHeaders: boolean | DraftHeadersVersion
  identifier: string | ValueDeterminingMiddleware<string>
  retryAfter?: number | ValueDeterminingMiddleware<number>
  requestPropertyName: string
  skipFailedRequests: boolean
  skipSuccessfulRequests: boolean
  keyGenerator: ValueDeterminingMiddleware<string>
  ipv6Subnet: number | ValueDeterminingMiddleware<number> | false
  handler: (request: Request, response: Response, next: NextFunction, optionsUsed: Options) => void | Promise<void>
  skip: ValueDeterminingMiddleware<boolean>
  requestWasSuccessful: ValueDeterminingMiddleware<boolean>
  /** An express-rate-limit store, or a Sluice store (`MemoryStore` of @sluice/core, `RedisStore` of @sluice/redis). */
  store: Store | LegacyStore | SluiceStore
  validate: boolean | EnabledValidations
  /** The old name of `legacyHeaders`. */
  headers?: boolean
  /** The old name of `limit`. */
  max?: number | ValueDeterminingMiddleware<number>
  passOnStoreError: boolean
  logger: Logger
  /**
   * Sluice: the algorithm that counts, with a Sluice store (the default store becomes Sluice's MemoryStore when it is
   * given). Default with a Sluice store: `'fixed-window'`, the closest to express-rate-limit's counting.
   */
  algorithm?: CompatAlgorithm
  /** Sluice: `Cache-Control` on a refused response, `'no-store'` by default; `false` leaves the header alone. */
  cacheControl?: string | false
}

/**
 * What the limiter puts on the request (`req.rateLimit` unless `requestPropertyName` says otherwise).
 *
 * @example
 * app.get('/', (req, res) => res.json({ left: (req as AugmentedRequest).rateLimit.remaining }))
 */
export interface RateLimitInfo {
  limit: number
  used: number
  remaining: number
  resetTime: Date | undefined
  key: string
}

/**
 * A request that went through the limiter.
 *
 * @example
 * const { remaining } = (req as AugmentedRequest).rateLimit
 */
export type AugmentedRequest = Request & { [key: string]: RateLimitInfo }

/**
 * The middleware {@link rateLimit} returns, with the store's `resetKey` and `getKey`.
 *
 * @example
 * const limiter: RateLimitRequestHandler = rateLimit({ limit: 5 })
 * await limiter.resetKey('127.0.0.1')
 */
export type RateLimitRequestHandler = RequestHandler & {
  resetKey: (key: string) => void | Promise<void>
  getKey: (key: string) => Promise<ClientRateLimitInfo | undefined> | ClientRateLimitInfo | undefined
}
