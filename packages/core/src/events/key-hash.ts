import { sha256Utf8 } from '../runtime/builtins'

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
