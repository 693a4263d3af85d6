import { type Logger, StoreUnavailableError } from '@sluice/core/store'
import { Deadlines } from './deadlines'

/** What a call gets when Redis did not do the work: it is known to be away, or the call failed or timed out. */
export const AWAY: unique symbol = Symbol('redis away')

/** What {@link Health} needs: how to ask Redis whether it is back, and how to report. */
export interface HealthOptions {
  readonly ping: () => Promise<unknown>
  readonly timeoutMs: number
  readonly probeIntervalMs: number
  readonly logger: Logger
  /** What requests get during an outage, for the log line: 'deciding from local memory', ... */
  readonly meanwhile: string
  /** Called once when Redis answers again after an outage. */
  readonly onRecovery: () => void
}

/**
 * The health of the connection to Redis. Every call runs within the timeout (see `Deadlines`); the first failure
 * starts an outage, logged once. During an outage no call is sent: one PING at a time, at most every
 * `probeIntervalMs` and only while requests arrive, asks whether Redis is back, and the first answer ends the
 * outage, logged once.
 *
 * @example
 * const health = new Health({ ping: () => client.ping(), timeoutMs: 100, probeIntervalMs: 250, logger: console,
 *   meanwhile: 'admitting every request', onRecovery: () => {} })
 * const reply = await health.call(() => client.evalsha(sha, 1, key))
 * if (reply === AWAY) fallBack()
 */
export class Health {
  private readonly deadlines: Deadlines
  /** Wall-clock ms when the current outage began; undefined while Redis answers. */
  private outageSince: number | undefined
  private lastError: unknown
  private nextProbeAt = 0
  private probing = false

  constructor(private readonly options: HealthOptions) {
    this.deadlines = new Deadlines(options.timeoutMs)
  }

  /** Runs `work` on Redis within the timeout, unless Redis is known to be away; AWAY when it was not done. */
  async call<T>(work: () => Promise<T>): Promise<T | typeof AWAY> {
    if (this.outageSince !== undefined) {
      this.probe()
      return AWAY
    }
    try {
      return await this.deadlines.run(work)
    } catch (error) {
      this.failed(error)
      return AWAY
    }
  }

  /** The error a store that fails closed throws while Redis is away. */
  unavailable(): StoreUnavailableError {
    return new StoreUnavailableError(`sluice: Redis is unavailable (${message(this.lastError)})`, {
      cause: this.lastError,
    })
  }

  private failed(error: unknown): void {
    this.lastError = error
    if (this.outageSince !== undefined) return
    this.outageSince = Date.now()
    this.nextProbeAt = this.outageSince + this.options.probeIntervalMs
    this.options.logger.warn(
      `sluice: Redis is unavailable (${message(error)}); ${this.options.meanwhile} until it answers again`,
    )
  }

  private probe(): void {
    if (this.probing || Date.now() < this.nextProbeAt) return
    this.probing = true
    this.deadlines.run(this.options.ping).then(
      () => {
        this.probing = false
        this.recovered()
      },
      (error: unknown) => {
        this.probing = false
        this.lastError = error
        this.nextProbeAt = Date.now() + this.options.probeIntervalMs
      },
    )
  }

  private recovered(): void {
    if (this.outageSince === undefined) return
    const lasted = Date.now() - this.outageSince
    this.outageSince = undefined
    this.lastError = undefined
    this.options.onRecovery()
    this.options.logger.info?.(`sluice: Redis answers again after ${lasted} ms; decisions come from Redis again`)
  }
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
