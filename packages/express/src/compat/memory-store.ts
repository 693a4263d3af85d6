import { InvalidOptionError } from '@sluice/core'
import { describeValue } from '@sluice/core/internal'
import type { ClientRateLimitInfo, Options, Store } from './types'

/** The longest delay Node's timers take (2^31 - 1 ms): the sweep runs every window. */
const MAX_TIMER_MS = 2 ** 31 - 1

interface Client {
  totalHits: number
  resetTime: Date
}

/**
 * The options of the compat {@link MemoryStore}.
 *
 * @example
 * const options: MemoryStoreOptions = { maxKeys: 10_000, clock: () => Date.now() }
 */
export interface MemoryStoreOptions {
  /** How many keys it holds at most; past it, the least recently counted key is dropped. Default 100 000. */
  maxKeys?: number
  /** Where it reads the time, in ms (for tests). Default `Date.now()`. */
  clock?: () => number
}

/**
 * The default store of the compat `rateLimit`: express-rate-limit's counting (each key's window starts at its first
 * hit and lasts `windowMs`; every hit counts, refused ones too), in this process's memory, bounded by `maxKeys`.
 *
 * @example
 * import { MemoryStore, rateLimit } from '@sluice/express/compat'
 * app.use(rateLimit({ windowMs: 60_000, limit: 10, store: new MemoryStore({ maxKeys: 10_000 }) }))
 */
export class MemoryStore implements Store {
  /** Its keys are this instance's own: another limiter cannot count into them. */
  readonly localKeys = true
  private windowMs = 60_000
  private readonly clients = new Map<string, Client>()
  private readonly maxKeys: number
  private readonly clock: () => number
  private sweep: NodeJS.Timeout | undefined

  constructor(options: MemoryStoreOptions = {}) {
    const { maxKeys = 100_000, clock = () => Date.now() } = options
    if (!Number.isSafeInteger(maxKeys) || maxKeys < 1) {
      throw new InvalidOptionError('maxKeys', `must be a positive whole number (got ${describeValue(maxKeys)})`)
    }
    if (typeof clock !== 'function') {
      throw new InvalidOptionError('clock', `must be a function (got ${describeValue(clock)})`)
    }
    this.maxKeys = maxKeys
    this.clock = clock
  }

  init(options: Pick<Options, 'windowMs'>): void {
    this.windowMs = options.windowMs
    if (this.sweep) clearInterval(this.sweep)
    this.sweep = setInterval(() => this.dropExpired(), Math.min(this.windowMs, MAX_TIMER_MS))
    this.sweep.unref()
  }

  get(key: string): Promise<ClientRateLimitInfo | undefined> {
    const client = this.clients.get(key)
    return Promise.resolve(client && client.resetTime.getTime() > this.clock() ? { ...client } : undefined)
  }

  increment(key: string): Promise<ClientRateLimitInfo> {
    const now = this.clock()
    let client = this.clients.get(key)
    if (client === undefined || client.resetTime.getTime() <= now) {
      client = { totalHits: 0, resetTime: new Date(now + this.windowMs) }
    }
    client.totalHits++
    this.touch(key, client)
    return Promise.resolve({ ...client })
  }

  decrement(key: string): Promise<void> {
    const client = this.clients.get(key)
    if (client !== undefined && client.totalHits > 0) client.totalHits--
    return Promise.resolve()
  }

  resetKey(key: string): Promise<void> {
    this.clients.delete(key)
    return Promise.resolve()
  }

  resetAll(): Promise<void> {
    this.clients.clear()
    return Promise.resolve()
  }

  /** Stops the sweep and forgets every key. */
  shutdown(): void {
    if (this.sweep) clearInterval(this.sweep)
    this.clients.clear()
  }

  /** Moves a key to the recent end of the map, dropping the least recent key past `maxKeys`. */
  private touch(key: string, client: Client): void {
    this.clients.delete(key)
    this.clients.set(key, client)
    if (this.clients.size > this.maxKeys) {
      const oldest = this.clients.keys().next().value
      if (oldest !== undefined) this.clients.delete(oldest)
    }
  }

  private dropExpired(): void {
    const now = this.clock()
    for (const [key, client] of this.clients) if (client.resetTime.getTime() <= now) this.clients.delete(key)
  }
}
