import { CallExpired } from './deadlines'

/**
 * What a failed call tells about Redis, by how far its cause reaches:
 *
 * - `'key'`: one key holds what the script cannot use (`SLUICEKEY`, from the script, or `WRONGTYPE`). Redis is fine:
 *   that request fails alone, and nothing else changes.
 * - `'slot'`: the call alone could not be done now (`TRYAGAIN` while its slot migrates, redirections that ran out, a
 *   call the client kept retrying while the connection answered others). That request falls back; Redis is not down.
 * - `'node'`: the node cannot decide for any of its keys: the connection failed or went silent, or Redis refused
 *   (`LOADING`, `BUSY`, `READONLY`, `MASTERDOWN`, `CLUSTERDOWN`, `OOM`, `MISCONF`, `NOREPLICAS`, `NOAUTH`, `NOPERM`,
 *   `NOSCRIPT` that survived the reload, or an error this list does not know). Its keys fall back until a probe on
 *   one of them is answered.
 */
export type Reach = 'key' | 'slot' | 'node'

const KEY_CODES = new Set(['SLUICEKEY', 'WRONGTYPE'])
const SLOT_CODES = new Set(['TRYAGAIN', 'MOVED', 'ASK'])
// ioredis Cluster wraps the error a command ended on once it has retried it `maxRedirections` times, in its message;
// node-redis (MaxCommandRedirectionsError) as its `cause`.
const REDIRECTIONS = 'Too many Cluster redirections. Last error: '
const NODE_REDIS_REDIRECTIONS = 'Too many Cluster redirections'
const ERROR_CLASS = /^[A-Za-z]*Error: /

/**
 * The code of a Redis error reply (its first word: `NOSCRIPT`, `TRYAGAIN`, ...), as ioredis (`ReplyError`) and
 * node-redis (`ErrorReply`) both give it, also inside their "Too many Cluster redirections" errors; '' for anything
 * else.
 *
 * @example
 * errorCode(new Error('Too many Cluster redirections. Last error: ReplyError: NOSCRIPT No matching script')) // 'NOSCRIPT'
 * errorCode(new Error('Too many Cluster redirections', { cause: new Error('MOVED 3999 127.0.0.1:7002') })) // 'MOVED'
 */
export function errorCode(error: unknown): string {
  if (!(error instanceof Error)) return ''
  if (error.message === NODE_REDIS_REDIRECTIONS && error.cause instanceof Error) return errorCode(error.cause)
  let { message } = error
  if (message.startsWith(REDIRECTIONS)) message = message.slice(REDIRECTIONS.length).replace(ERROR_CLASS, '')
  const code = /^[A-Z]+(?= |$)/.exec(message)
  return code === null ? '' : code[0]
}

/**
 * The Redis time (ms) the script gave in an error `<code> <ms>` (main.lua's 'SLUICE_CLOCK' and 'SLUICELATE'), or
 * undefined for any other error.
 *
 * @example
 * redisTimeOf(new ReplyError('SLUICELATE 1700000000000'), 'SLUICELATE') // 1700000000000
 */
export function redisTimeOf(error: unknown, code: string): number | undefined {
  if (!(error instanceof Error) || !error.message.startsWith(`${code} `)) return undefined
  const ms = Number(error.message.slice(code.length + 1))
  return Number.isSafeInteger(ms) ? ms : undefined
}

/**
 * How far the cause of a failed call reaches (see {@link Reach}).
 *
 * @example
 * reachOf(new ReplyError('WRONGTYPE Operation against a key holding the wrong kind of value')) // 'key'
 */
export function reachOf(error: unknown): Reach {
  if (error instanceof CallExpired) return error.reach
  const code = errorCode(error)
  if (KEY_CODES.has(code)) return 'key'
  if (SLOT_CODES.has(code)) return 'slot'
  return 'node'
}

/**
 * Which of a call's keys a key error is about, counting from 0, and what that key holds: the script says
 * `SLUICEKEY <rule number> <what>`; a bare `WRONGTYPE` (from a script of another version) names no key, so the first.
 *
 * @example
 * keyProblem(new ReplyError('SLUICEKEY 2 holds a list')) // { index: 1, holds: 'holds a list' }
 */
export function keyProblem(error: unknown): { index: number; holds: string } {
  const message = error instanceof Error ? error.message : String(error)
  const match = /SLUICEKEY (\d+) (.*)$/s.exec(message)
  if (match === null) return { index: 0, holds: 'holds a value of the wrong type' }
  return { index: Number(match[1]) - 1, holds: match[2] as string }
}
