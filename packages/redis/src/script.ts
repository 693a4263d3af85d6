import { createHash } from 'node:crypto'
import blocks from './lua/blocks.lua'
import calendar from './lua/calendar.lua'
import calendarWindow from './lua/calendar-window.lua'
import fixedWindow from './lua/fixed-window.lua'
import keyTime from './lua/key-time.lua'
import leakyBucket from './lua/leaky-bucket.lua'
import leakyQueue from './lua/leaky-queue.lua'
import main from './lua/main.lua'
import math from './lua/math.lua'
import slidingLog from './lua/sliding-log.lua'
import slidingWindow from './lua/sliding-window.lua'
import tokenBucket from './lua/token-bucket.lua'
import windowCount from './lua/window-count.lua'

/** A script as EVALSHA calls it: its text (sent with EVAL after a NOSCRIPT) and the SHA1 of that text. */
export interface Script {
  readonly source: string
  readonly sha: string
}

/** One algorithm's Lua: see {@link ALGORITHM_SOURCES}. */
export interface AlgorithmSource {
  /** The Lua function that runs it: its file's name, `-` as `_`. */
  readonly name: string
  /** Its file, beside the TypeScript algorithm of that name. */
  readonly source: string
  /**
   * The helper files it needs before it (the fixed and the calendar window: window-count.lua; the calendar window:
   * calendar.lua too). A script holds each helper once, however many of its algorithms need it.
   */
  readonly helpers?: readonly string[]
  /** How many numbers each call sends for a rule beyond its parameters: a calendar window's period boundaries. */
  readonly boundaries: number
  /**
   * Whether it reads and writes its key itself (`<name>_read`, `<name>_write`) instead of a value decoded and encoded
   * whole: the sliding log, whose value grows with its limit.
   */
  readonly ownsKey?: boolean
  /**
   * Whether its key outlives its state: the key expires at `<name>_key_expires_at` of the state, and the state at
   * `<name>_expires_at` of the state and its key's expiry (see `read` and `write` in main.lua). The sliding window,
   * whose state expires later with each charge.
   */
  readonly keyOutlivesState?: boolean
}

/** Each algorithm by its code (the `algorithmCode` of a rule, part of its keys), in the order scripts hold them. */
export const ALGORITHM_SOURCES: { readonly [code: string]: AlgorithmSource } = {
  fw: { name: 'fixed_window', source: fixedWindow, helpers: [windowCount], boundaries: 0 },
  sl: { name: 'sliding_log', source: slidingLog, boundaries: 0, ownsKey: true },
  sw: { name: 'sliding_window', source: slidingWindow, boundaries: 0, keyOutlivesState: true },
  tb: { name: 'token_bucket', source: tokenBucket, boundaries: 0 },
  lb: { name: 'leaky_bucket', source: leakyBucket, boundaries: 0 },
  lq: { name: 'leaky_queue', source: leakyQueue, boundaries: 0 },
  // A calendar window's boundaries: calendar.ts's boundariesAround, four of them.
  cw: { name: 'calendar_window', source: calendarWindow, helpers: [windowCount, calendar], boundaries: 4 },
}

/**
 * The script for batches of requests whose rules use `codes` (in any order, repeats allowed): the integer helpers,
 * only those algorithms, the table that names them and the entry point. Lua builds every function and table of a
 * script on every call, so a script without the algorithms a batch does not use costs Redis less; and every batch is
 * still one EVALSHA. A store builds each script once, when a batch first needs that set (see {@link scriptForMask}).
 *
 * @example
 * const { source, sha } = scriptFor(['sw', 'tb']) // sliding window and token bucket, for two stacked rules
 */
export function scriptFor(codes: readonly string[]): Script {
  const used = CODES.filter((code) => codes.includes(code))
  if (used.length === 0 || used.length !== new Set(codes).size) {
    throw new Error(`sluice: no Redis script for the algorithms ${JSON.stringify(codes)}`)
  }
  const algorithms = used.map((code) => ALGORITHM_SOURCES[code] as AlgorithmSource)
  const table = algorithms.map(({ name, boundaries, ownsKey, keyOutlivesState }, i) => {
    const outside = boundaries > 0 ? `, outside = ${name}_outside` : ''
    const life = keyOutlivesState ? `, key_expires_at = ${name}_key_expires_at, expires_at = ${name}_expires_at` : ''
    const storage = ownsKey
      ? `read = ${name}_read, write = ${name}_write`
      : `decode = ${name}_decode, encode = ${name}_encode`
    return `  ${used[i]} = { step = ${name}, refund = ${name}_refund, ${storage}, boundaries = ${boundaries}${outside}${life} },`
  })
  const helpers = new Set(algorithms.flatMap((a) => a.helpers ?? []))
  const source = [
    math,
    keyTime,
    blocks,
    ...helpers,
    ...algorithms.map((a) => a.source),
    ['local ALGORITHMS = {', ...table, '}'].join('\n'),
    main,
  ]
    .map((part) => part.trimEnd())
    .join('\n\n')
  return { source, sha: createHash('sha1').update(source).digest('hex') }
}

const CODES = Object.keys(ALGORITHM_SOURCES)
const scripts: (Script | undefined)[] = []

/**
 * The algorithms of `codes` as a bit mask (bit i: the i-th code of {@link ALGORITHM_SOURCES}): a batch ORs the masks
 * of its requests to know which script evaluates them all.
 *
 * @example
 * scriptForMask(codeMask(['sw']) | codeMask(['tb'])) // the script of scriptFor(['sw', 'tb'])
 */
export function codeMask(codes: readonly string[]): number {
  let mask = 0
  for (const code of codes) {
    const bit = CODES.indexOf(code)
    if (bit === -1) throw new Error(`sluice: no Redis script for the algorithms ${JSON.stringify(codes)}`)
    mask |= 1 << bit
  }
  return mask
}

/**
 * The script for the algorithms of a {@link codeMask}, built on first use and kept.
 *
 * @example
 * const { sha } = scriptForMask(codeMask(['fw']))
 */
export function scriptForMask(mask: number): Script {
  let script = scripts[mask]
  if (script === undefined) {
    script = scriptFor(CODES.filter((_, bit) => (mask >> bit) & 1))
    scripts[mask] = script
  }
  return script
}
