// express-rate-limit's options, read once into the settings the middleware runs on. Defaults are
// express-rate-limit 8's. What cannot work (a window that is no duration, a store without its methods, a header
// draft that does not exist) throws an InvalidOptionError here, at construction, rather than being logged at the first
// request as express-rate-limit does; the rest of its checks stay runtime warnings (validations.ts).
import { isIPv6 } from 'node:net'
import { InvalidOptionError, MemoryStore as SluiceMemoryStore, type Store as SluiceStore } from '@sluice/core'
import { describeValue } from '@sluice/core/internal'
import type { Request, Response } from 'express'
import { type Counter, isSluiceStore, promisified, sluiceCounter, storeCounter } from './counters'
import { ipKeyGenerator } from './ip-key'
import { MemoryStore } from './memory-store'
import type {
  CompatAlgorithm,
  DraftHeadersVersion,
  EnabledValidations,
  Logger,
  Options,
  Store,
  ValueDeterminingMiddleware,
} from './types'
import { VALIDATION_NAMES, Validations } from './validations'

/** express-rate-limit 8's options, and this module's own. */
const KNOWN_OPTIONS = new Set([
  'windowMs',
  'limit',
  'message',
  'statusCode',
  'legacyHeaders',
  'standardHeaders',
  'identifier',
  'retryAfter',
  'requestPropertyName',
  'skipFailedRequests',
  'skipSuccessfulRequests',
  'keyGenerator',
  'ipv6Subnet',
  'handler',
  'skip',
  'requestWasSuccessful',
  'store',
  'validate',
  'headers',
  'max',
  'passOnStoreError',
  'logger',
  // Removed in express-rate-limit 7: warned about, as there.
  'draft_polli_ratelimit_headers',
  'onLimitReached',
  // express-slow-down's, which passes its options through.
  'delayAfter',
  'delayMs',
  'maxDelayMs',
  // Sluice's.
  'algorithm',
  'cacheControl',
])

const ALGORITHMS: readonly CompatAlgorithm[] = [
  'fixed-window',
  'sliding-log',
  'sliding-window',
  'token-bucket',
  'leaky-bucket',
]
const DRAFTS: readonly DraftHeadersVersion[] = ['draft-6', 'draft-7', 'draft-8']
/** The longest delay Node's timers take, and so the longest window a memory store can sweep. */
const MAX_WINDOW_MS = 2 ** 31 - 1

/** Prints as express-rate-limit's default logger does: the message, then the error. */
const consoleLogger: Logger = {
  warn: (error, message) => (message === undefined ? console.warn(error) : console.warn(message, error)),
  error: (error, message) => (message === undefined ? console.error(error) : console.error(message, error)),
}

/** The settled configuration of one limiter. */
export interface Settings {
  readonly windowMs: number
  readonly limit: number | ValueDeterminingMiddleware<number>
  readonly statusCode: number
  readonly legacyHeaders: boolean
  readonly standardHeaders: DraftHeadersVersion | false
  readonly identifier: string | ValueDeterminingMiddleware<string>
  readonly retryAfter: number | ValueDeterminingMiddleware<number> | undefined
  readonly requestPropertyName: string
  readonly skipFailedRequests: boolean
  readonly skipSuccessfulRequests: boolean
  readonly keyGenerator: ValueDeterminingMiddleware<string>
  readonly handler: Options['handler']
  readonly skip: ValueDeterminingMiddleware<boolean>
  readonly requestWasSuccessful: ValueDeterminingMiddleware<boolean>
  readonly passOnStoreError: boolean
  readonly logger: Logger
  readonly cacheControl: string | false
  readonly counter: Counter
  readonly validations: Validations
  /** The options as the handler and the store's `init` receive them: every default filled in. */
  readonly options: Options
}

function fail(option: string, detail: string, value: unknown): never {
  throw new InvalidOptionError(option, `${detail} (got ${describeValue(value)})`)
}

function isFunction(value: unknown): value is (...args: never[]) => unknown {
  return typeof value === 'function'
}

function checkFlag(options: Record<string, unknown>, name: string, fallback: boolean): boolean {
  const value = options[name] ?? fallback
  if (typeof value !== 'boolean') fail(name, 'must be true or false', value)
  return value
}

function checkCallback<T>(options: Record<string, unknown>, name: string, fallback: T): T {
  const value = options[name] ?? fallback
  if (!isFunction(value)) fail(name, 'must be a function', value)
  return value as T
}

function checkNumberOrFunction(value: unknown, name: string): number | ValueDeterminingMiddleware<number> {
  if (isFunction(value)) return value as ValueDeterminingMiddleware<number>
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    fail(name, 'must be a number of 0 or more, or a function of the request', value)
  }
  return value
}

function checkLogger(value: unknown): Logger {
  const logger = value as Partial<Logger> | null
  if (logger === null || typeof logger !== 'object' || !isFunction(logger.warn) || !isFunction(logger.error)) {
    fail('logger', 'must have warn() and error() methods', value)
  }
  return logger as Logger
}

function checkValidate(value: unknown): EnabledValidations {
  if (value === undefined || value === true) return { default: true }
  if (value === false) return { default: false }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    fail('validate', 'must be true, false or an object of checks', value)
  }
  const known: readonly string[] = [...VALIDATION_NAMES, 'default']
  for (const [name, enabled] of Object.entries(value)) {
    if (!known.includes(name)) fail(`validate.${name}`, `is not a check (the checks: ${known.join(', ')})`, name)
    if (typeof enabled !== 'boolean') fail(`validate.${name}`, 'must be true or false', enabled)
  }
  return value as EnabledValidations
}

function checkIpv6Subnet(value: unknown, option = 'ipv6Subnet'): number | false {
  if (value === false) return false
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 32 || value > 64) {
    fail(option, 'must be a prefix length from 32 to 64 (usually 48 to 64), false, or a function', value)
  }
  return value
}

function checkStandardHeaders(value: unknown): DraftHeadersVersion | false {
  if (value === undefined || value === false) return false
  if (value === true) return 'draft-6'
  if (!DRAFTS.includes(value as DraftHeadersVersion))
    fail('standardHeaders', `must be true, false, ${DRAFTS.join(', ')}`, value)
  return value as DraftHeadersVersion
}

/** express-rate-limit's policy name: `<limit>-in-<window>`, the window in seconds, minutes, hours or days. */
function defaultIdentifier(windowMs: number, propertyName: string): ValueDeterminingMiddleware<string> {
  const seconds = windowMs / 1000
  const minutes = seconds / 60
  const hours = minutes / 60
  const days = hours / 24
  const duration =
    seconds < 60
      ? `${seconds}sec`
      : minutes < 60
        ? `${minutes}min`
        : hours < 24
          ? `${hours}hr${hours > 1 ? 's' : ''}`
          : `${days}day${days > 1 ? 's' : ''}`
  return (req) => `${(req as unknown as Record<string, { limit: number }>)[propertyName]?.limit}-in-${duration}`
}

/** The counter of the `store` (and `algorithm`) options. */
function counterOf(
  store: unknown,
  algorithm: CompatAlgorithm | undefined,
  windowMs: number,
  limit: number | ValueDeterminingMiddleware<number>,
  logger: Logger,
): Counter {
  const sluiceStore: SluiceStore | undefined = isSluiceStore(store)
    ? store
    : store === undefined && algorithm !== undefined
      ? new SluiceMemoryStore()
      : undefined
  if (sluiceStore !== undefined) {
    return sluiceCounter(sluiceStore, {
      algorithm: algorithm ?? 'fixed-window',
      windowMs,
      limit: typeof limit === 'number' ? limit : undefined,
      logger,
      now: Date.now,
    })
  }
  if (algorithm !== undefined) {
    fail('algorithm', 'needs a Sluice store (MemoryStore of @sluice/core, RedisStore of @sluice/redis)', store)
  }
  const given = (store ?? new MemoryStore()) as Store
  const methods = given as unknown as Record<string, unknown>
  const usable =
    (isFunction(methods['increment']) || isFunction(methods['incr'])) &&
    isFunction(methods['decrement']) &&
    isFunction(methods['resetKey']) &&
    (methods['resetAll'] === undefined || isFunction(methods['resetAll'])) &&
    (methods['init'] === undefined || isFunction(methods['init']))
  if (!usable) {
    fail('store', 'must be a store with increment(), decrement() and resetKey(), or a Sluice store', store)
  }
  return storeCounter(promisified(given), given)
}

/**
 * Reads express-rate-limit options into settings. Undefined options take their defaults, as there.
 *
 * @example
 * const settings = parseOptions({ windowMs: 60_000, limit: 10 })
 */
export function parseOptions(passed: Partial<Options>): Settings {
  if (passed === null || typeof passed !== 'object') fail('options', 'must be an object', passed)
  const given: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(passed)) if (value !== undefined) given[name] = value
  const logger = checkLogger(given['logger'] ?? consoleLogger)
  const enabled = checkValidate(given['validate'])
  const validations = new Validations(enabled, logger)
  if (validations.enabled('knownOptions')) {
    for (const name of Object.keys(passed)) {
      if (!KNOWN_OPTIONS.has(name)) fail(name, 'is not an option of express-rate-limit or of this module', name)
    }
  }
  validations.removedOptions(given)
  const windowMs = given['windowMs'] ?? 60_000
  if (typeof windowMs !== 'number' || !Number.isFinite(windowMs) || windowMs < 1 || windowMs > MAX_WINDOW_MS) {
    fail('windowMs', `must be a number of ms from 1 to ${MAX_WINDOW_MS}`, windowMs)
  }
  const limit = checkNumberOrFunction(
    given['limit'] ?? given['max'] ?? 5,
    given['limit'] === undefined ? 'max' : 'limit',
  )
  const statusCode = given['statusCode'] ?? 429
  if (typeof statusCode !== 'number' || !Number.isInteger(statusCode) || statusCode < 100 || statusCode > 999) {
    fail('statusCode', 'must be an HTTP status code', statusCode)
  }
  const requestPropertyName = given['requestPropertyName'] ?? 'rateLimit'
  if (typeof requestPropertyName !== 'string' || requestPropertyName === '') {
    fail('requestPropertyName', 'must be a non-empty string', requestPropertyName)
  }
  const identifier = given['identifier'] ?? defaultIdentifier(windowMs, requestPropertyName)
  if (typeof identifier !== 'string' && !isFunction(identifier))
    fail('identifier', 'must be a string or a function', identifier)
  const retryAfter = given['retryAfter']
  if (retryAfter !== undefined) checkNumberOrFunction(retryAfter, 'retryAfter')
  const algorithm = given['algorithm']
  if (algorithm !== undefined && !ALGORITHMS.includes(algorithm as CompatAlgorithm)) {
    fail('algorithm', `must be one of ${ALGORITHMS.join(', ')}`, algorithm)
  }
  const cacheControl = given['cacheControl'] ?? 'no-store'
  if (cacheControl !== false && (typeof cacheControl !== 'string' || cacheControl === '')) {
    fail('cacheControl', 'must be a header value or false', cacheControl)
  }
  const ipv6Subnet = given['ipv6Subnet'] ?? 56
  const subnetOf = isFunction(ipv6Subnet)
    ? (ipv6Subnet as ValueDeterminingMiddleware<number>)
    : (
        (subnet) => () =>
          subnet
      )(checkIpv6Subnet(ipv6Subnet))
  validations.keyGenerator(given['keyGenerator'], given['ipv6Subnet'])
  const keyGenerator = checkCallback<ValueDeterminingMiddleware<string>>(
    given,
    'keyGenerator',
    async function ipKey(req: Request, res: Response): Promise<string> {
      validations.request(req)
      const ip = req.ip as string
      if (!isIPv6(ip)) return ipKeyGenerator(ip)
      const subnet = await subnetOf(req, res)
      if (isFunction(ipv6Subnet)) validations.ipv6Subnet(subnet)
      return ipKeyGenerator(ip, subnet as number | false)
    },
  )
  const message = given['message'] ?? 'Too many requests, please try again later.'
  const handler = checkCallback<Options['handler']>(
    given,
    'handler',
    async function sendMessage(req: Request, res: Response): Promise<void> {
      res.status(statusCode)
      const body = isFunction(message) ? await (message as ValueDeterminingMiddleware<unknown>)(req, res) : message
      if (!res.writableEnded) res.send(body)
    },
  )
  const counter = counterOf(given['store'], algorithm as CompatAlgorithm | undefined, windowMs, limit, logger)
  const settings = {
    windowMs,
    limit,
    statusCode,
    legacyHeaders: checkFlag(given, 'legacyHeaders', checkFlag(given, 'headers', true)),
    standardHeaders: checkStandardHeaders(given['standardHeaders']),
    identifier: identifier as string | ValueDeterminingMiddleware<string>,
    retryAfter: retryAfter as Settings['retryAfter'],
    requestPropertyName,
    skipFailedRequests: checkFlag(given, 'skipFailedRequests', false),
    skipSuccessfulRequests: checkFlag(given, 'skipSuccessfulRequests', false),
    keyGenerator,
    handler,
    skip: checkCallback<ValueDeterminingMiddleware<boolean>>(given, 'skip', () => false),
    requestWasSuccessful: checkCallback<ValueDeterminingMiddleware<boolean>>(
      given,
      'requestWasSuccessful',
      (_req, res) => res.statusCode < 400,
    ),
    passOnStoreError: checkFlag(given, 'passOnStoreError', false),
    logger,
    cacheControl: cacheControl as string | false,
    counter,
    validations,
  }
  const options = {
    ...given,
    windowMs,
    limit,
    message,
    statusCode,
    legacyHeaders: settings.legacyHeaders,
    standardHeaders: settings.standardHeaders,
    identifier: settings.identifier,
    retryAfter,
    requestPropertyName,
    skipFailedRequests: settings.skipFailedRequests,
    skipSuccessfulRequests: settings.skipSuccessfulRequests,
    keyGenerator,
    ipv6Subnet,
    handler,
    skip: settings.skip,
    requestWasSuccessful: settings.requestWasSuccessful,
    store: (given['store'] ?? counter.store) as Options['store'],
    validate: enabled,
    passOnStoreError: settings.passOnStoreError,
    logger,
    cacheControl: settings.cacheControl,
  } as Options
  return { ...settings, options }
}
