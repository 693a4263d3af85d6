import { type CompiledRule, type EventKeys, keyHash, type Logger, StoreKeyError } from '@sluice/core/store'
import { keyProblem } from './errors'

// A key shown in a log line or an error message is cut to this many characters: user keys can be long.
const SHOWN_KEY_CHARS = 200

/**
 * Keys whose state the script cannot use: each failed request gets a `StoreKeyError`, and each key is logged once
 * (the most recent `maxKeys` keys are remembered, so a flood of distinct bad keys cannot grow memory).
 *
 * @example
 * const keyErrors = new KeyErrors(console, 1000)
 * throw keyErrors.failed(error, rule, 'user:42', 'sluice:default:sw:{user:42}', 'hash')
 */
export class KeyErrors {
  private readonly logged = new Set<string>()

  /**
   * `owner`: what wrote the keys (a rule, a concurrency limiter); `remedy`: what ends a key's failures.
   */
  constructor(
    private readonly logger: Logger,
    private readonly maxKeys: number,
    private readonly owner = 'rule',
    private readonly remedy = 'the key is deleted (limiter.reset) or expires',
  ) {}

  /**
   * The error a request gets when the script failed on the key of `rule`; logged once per Redis key. The message and
   * the log line show the key (and the Redis key, which holds it) only under `eventKeys: 'raw'`; otherwise the key's
   * `keyHash`, since keys are often personal data or secrets (an IP address, an API key).
   */
  failed(
    cause: unknown,
    rule: Pick<CompiledRule, 'name'>,
    key: string,
    redisKey: string,
    eventKeys?: EventKeys,
  ): StoreKeyError {
    const { holds } = keyProblem(cause)
    const shown = (text: string) =>
      JSON.stringify(text.length > SHOWN_KEY_CHARS ? `${text.slice(0, SHOWN_KEY_CHARS)}…` : text)
    const which =
      eventKeys === 'raw'
        ? `the Redis key ${shown(redisKey)} (${this.owner} "${rule.name}", key ${shown(key)})`
        : `the Redis key of ${this.owner} "${rule.name}" for the key with keyHash ${keyHash(key)}`
    const message =
      `sluice: ${which} ${holds}, not a state this ${this.owner} wrote; its requests fail until ${this.remedy}. ` +
      'No other key is affected.'
    if (!this.logged.has(redisKey)) {
      if (this.logged.size >= this.maxKeys) this.logged.delete(this.logged.values().next().value as string)
      this.logged.add(redisKey)
      this.logger.error(message)
    }
    return new StoreKeyError(message, key, rule.name, { cause, eventKeys })
  }

  /** Forgets that a key was logged (it was reset: if it goes bad again, that is news). */
  forget(redisKey: string): void {
    this.logged.delete(redisKey)
  }
}
