import type { CompiledRule } from '@sluice/core'

// '%' starts an escape, '{' and '}' would move or end the hash tag, ':' separates the parts of the key.
const PREFIX_SPECIAL = /[%{}:]/g
const KEY_SPECIAL = /[%{}]/g
const ESCAPES: { readonly [char: string]: string } = { '%': '%25', '{': '%7B', '}': '%7D', ':': '%3A' }
const escapeChar = (char: string) => ESCAPES[char] as string

const rulePrefixes = new WeakMap<CompiledRule, string>()

/**
 * The Redis key of `key` under `rule`: `prefix:name:code:{key}`, with `%`, `{`, `}` escaped (and `:` in the
 * prefix), so the hash tag is exactly the escaped user key and the encoding is injective: two different
 * (prefix, name, algorithm, key) never share a Redis key. The rule name cannot hold ':' or braces (core checks).
 * On a Cluster every rule's state for one user key is in one slot, so stacked rules on one key are one call.
 */
export function redisKey(rule: CompiledRule, key: string): string {
  let prefix = rulePrefixes.get(rule)
  if (prefix === undefined) {
    prefix = `${rule.prefix.replace(PREFIX_SPECIAL, escapeChar)}:${rule.name}:${rule.algorithmCode}:`
    rulePrefixes.set(rule, prefix)
  }
  return `${prefix}{${key.replace(KEY_SPECIAL, escapeChar)}}`
}
