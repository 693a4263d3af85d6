import { type CompiledRule, longKeyDigest, MAX_KEPT_KEY_LENGTH } from '@sluice/core/store'

// '%' starts an escape, '{' and '}' would move or end the hash tag, ':' separates the parts of the key.
const PREFIX_SPECIAL = /[%{}:]/g
const KEY_SPECIAL = /[%{}]/g
const ESCAPES: { readonly [char: string]: string } = { '%': '%25', '{': '%7B', '}': '%7D', ':': '%3A' }
const escapeChar = (char: string) => ESCAPES[char] as string

/**
 * What every Redis key of a rule starts with: its key space, `prefix:name:code:`, with `%`, `{`, `}` and `:` escaped
 * in the prefix (the rule name cannot hold them: core checks). Worked out once per rule, when a store binds it.
 */
export function redisKeyPrefix(rule: CompiledRule): string {
  return `${escapePrefix(rule.prefix)}:${rule.name}:${rule.algorithmCode}:`
}

/** A key prefix with '%', '{', '}' and ':' escaped, so it can neither open a hash tag nor add a part to a key. */
export function escapePrefix(prefix: string): string {
  return prefix.replace(PREFIX_SPECIAL, escapeChar)
}

/** A caller's key with '%', '{' and '}' escaped, so it fits in a hash tag whole. */
export function escapeKey(key: string): string {
  // Most keys hold none of them: then no regular expression runs. (indexOf, not a global RegExp's test(), which
  // keeps its lastIndex from one call to the next.)
  if (key.indexOf('%') === -1 && key.indexOf('{') === -1 && key.indexOf('}') === -1) return key
  return key.replace(KEY_SPECIAL, escapeChar)
}

/**
 * What the block keys of a rule with a `block` start with: `prefix:name:block:`, escaped as `redisKeyPrefix`. A
 * block key holds when the key's block ends; it shares its hash tag, and so its slot, with the key's counts.
 */
export function redisBlockKeyPrefix(rule: CompiledRule): string {
  return `${rule.prefix.replace(PREFIX_SPECIAL, escapeChar)}:${rule.name}:block:`
}

/**
 * The Redis key of user key `key` after a rule's `redisKeyPrefix`: the prefix, then the key, escaped, as the hash
 * tag. A key longer than MAX_KEPT_KEY_LENGTH goes by its digest, as `%sha256:` and 64 hex digits, so a key costs
 * Redis a bounded amount; an escaped key never holds '%s', so no short key can meet a digest. The encoding is
 * injective (up to SHA-256 collisions): two different (prefix, name, algorithm, key) never share a Redis key. On a
 * Cluster every rule's state for one user key is in one slot, so stacked rules on one key are one call.
 */
export function redisKey(prefix: string, key: string): string {
  if (key.length > MAX_KEPT_KEY_LENGTH) return `${prefix}{%sha256:${longKeyDigest(key)}}`
  return `${prefix}{${escapeKey(key)}}`
}

/**
 * The Redis key of `key` under `rule`, in one step.
 *
 * @example
 * await client.pttl(redisKeyOf(limiter.rules[0], 'user:42'))
 */
export function redisKeyOf(rule: CompiledRule, key: string): string {
  return redisKey(redisKeyPrefix(rule), key)
}
