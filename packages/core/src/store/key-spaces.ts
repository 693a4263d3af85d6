import type { CompiledRule } from '../rules/rules'
import { warnOnce } from '../util/diagnostics'
import type { BindOptions } from './store'

/**
 * The key spaces bound on one store. Two limiters that count in the same key space (the same prefix, rule name and
 * algorithm) on one store share their counts, silently; a store says so when the second one binds, once per key
 * space (a limiter built per request would otherwise log on every request).
 *
 * @example
 * private readonly keySpaces = new KeySpaces()
 * bind(rules: readonly CompiledRule[], options: BindOptions = {}) {
 *   this.keySpaces.claim(rules, options)
 * }
 */
export class KeySpaces {
  private readonly bound = new Set<string>()
  private readonly reported = new Set<string>()

  claim(rules: readonly CompiledRule[], options: BindOptions = {}): void {
    if (options.variant === true) return
    const logger = options.logger ?? console
    for (const rule of rules) {
      if (this.bound.has(rule.keySpace) && !this.reported.has(rule.keySpace)) {
        this.reported.add(rule.keySpace)
        warnOnce(
          logger,
          'SLUICE_SHARED_KEY_SPACE',
          `sluice: another limiter on this store already counts under "${rule.prefix}:${rule.name}", so the two ` +
            'share their counts. Give each its own `name` or `prefix`, or use one limiter in both places.',
          rule.keySpace,
        )
      }
      this.bound.add(rule.keySpace)
    }
  }
}
