// How a key leaves the process (in an event, an error, a log line): by its hash, unless the limiter says `'raw'`.
import { sha256Utf8 } from '../runtime/builtins'

/**
 * What the events of a limiter say of its keys: `'hash'` (the default) publishes `keyHash` only, `'raw'` adds the key
 * itself. Keys are often personal data or secrets (IP addresses, user ids, API keys), and a subscriber that logs
 * whole messages would copy them into logs and metrics systems. Store errors and log lines follow the same choice.
 *
 * @example
 * createLimiter({ limit: 100, window: '1m', eventKeys: 'raw' })
 */
export type EventKeys = 'hash' | 'raw'

/**
 * The first 16 hex digits of the SHA-256 of `key`, as events, store errors and log lines show a key unless the
 * limiter has `eventKeys: 'raw'`: compute it for a key you know to find what was said about it.
 *
 * @example
 * subscribe('sluice:decision', (m) => { if ((m as DecisionEvent).rules[0]?.keyHash === keyHash('user:42')) ... })
 */
export function keyHash(key: string): string {
  return sha256Utf8(key).slice(0, 16)
}
