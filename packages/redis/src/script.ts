import { createHash } from 'node:crypto'
import fixedWindow from './lua/fixed-window.lua'
import leakyBucket from './lua/leaky-bucket.lua'
import leakyQueue from './lua/leaky-queue.lua'
import main from './lua/main.lua'
import math from './lua/math.lua'
import slidingLog from './lua/sliding-log.lua'
import slidingWindow from './lua/sliding-window.lua'
import tokenBucket from './lua/token-bucket.lua'

/** A script as EVALSHA calls it: its text (sent with EVAL after a NOSCRIPT) and the SHA1 of that text. */
export interface Script {
  readonly source: string
  readonly sha: string
}

/**
 * Each algorithm by its code (the `algorithmCode` of a rule, part of its keys), in the order scripts hold them:
 * the Lua function that runs it (its file's name, `-` as `_`) and its file, beside the TypeScript of that name.
 */
export const ALGORITHM_SOURCES: { readonly [code: string]: { readonly name: string; readonly source: string } } = {
  fw: { name: 'fixed_window', source: fixedWindow },
  sl: { name: 'sliding_log', source: slidingLog },
  sw: { name: 'sliding_window', source: slidingWindow },
  tb: { name: 'token_bucket', source: tokenBucket },
  lb: { name: 'leaky_bucket', source: leakyBucket },
  lq: { name: 'leaky_queue', source: leakyQueue },
}

/**
 * The script for a request whose rules use `codes` (in any order, repeats allowed): the integer helpers, only
 * those algorithms, the table that names them and the entry point. Lua builds every function and table of a script
 * on every call, so a script without the algorithms a request does not use costs Redis less; and every stack of
 * rules is still one EVALSHA. A store builds it once, when it binds rules that use that set.
 *
 * @example
 * const { source, sha } = scriptFor(['sw', 'tb']) // sliding window and token bucket, for two stacked rules
 */
export function scriptFor(codes: readonly string[]): Script {
  const used = Object.keys(ALGORITHM_SOURCES).filter((code) => codes.includes(code))
  if (used.length === 0 || used.length !== new Set(codes).size) {
    throw new Error(`sluice: no Redis script for the algorithms ${JSON.stringify(codes)}`)
  }
  const algorithms = used.map((code) => ALGORITHM_SOURCES[code] as { name: string; source: string })
  const table = algorithms.map(
    ({ name }, i) =>
      `  ${used[i]} = { step = ${name}, refund = ${name}_refund, decode = ${name}_decode, encode = ${name}_encode },`,
  )
  const source = [math, ...algorithms.map((a) => a.source), ['local ALGORITHMS = {', ...table, '}'].join('\n'), main]
    .map((part) => part.trimEnd())
    .join('\n\n')
  return { source, sha: createHash('sha1').update(source).digest('hex') }
}
