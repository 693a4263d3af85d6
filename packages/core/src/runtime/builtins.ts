// Node's built-in modules, where the runtime has them, looked up when first needed instead of imported at load: the
// core then loads in a browser, a Worker or an edge runtime too, and on Node it uses Node's own pieces. Node has
// `process.getBuiltinModule` since 20.16 and 22.3 (so do Bun and Deno); a runtime without it gets the fallbacks.
import { sha256Hex, utf16leBytes } from './sha256'

interface NodeProcess {
  getBuiltinModule?(id: string): unknown
}

interface NodeCrypto {
  hash?(algorithm: string, data: string, outputEncoding: 'hex'): string
  createHash(algorithm: string): {
    update(data: string, encoding: 'utf8' | 'utf16le'): { digest(encoding: 'hex'): string }
  }
}

/**
 * A diagnostics channel as the core publishes on it: Node's `diagnostics_channel`, or, where the runtime has none,
 * one that nobody ever subscribes to.
 *
 * @example
 * const decisions: Channel = namedChannel('sluice:decision')
 * if (decisions.hasSubscribers) decisions.publish(event)
 */
export interface Channel {
  readonly hasSubscribers: boolean
  publish(message: unknown): void
}

/**
 * A built-in module of Node by its id (`'node:crypto'`), or undefined where the runtime has no such module.
 *
 * @example
 * const perfHooks = nodeBuiltin<typeof import('node:perf_hooks')>('node:perf_hooks')
 */
export function nodeBuiltin<T>(id: string): T | undefined {
  const process = (globalThis as { process?: NodeProcess }).process
  if (typeof process?.getBuiltinModule !== 'function') return undefined
  return process.getBuiltinModule(id) as T | undefined
}

const SILENT: Channel = Object.freeze({ hasSubscribers: false, publish() {} })

/**
 * The diagnostics channel of this name. Channels are looked up by name, so every copy of the core in a process (an
 * ESM and a CommonJS build, two versions) publishes on the same one. Without `node:diagnostics_channel` it is a
 * channel without subscribers, and publishing costs nothing.
 *
 * @example
 * const stores = namedChannel('sluice:store')
 */
export function namedChannel(name: string): Channel {
  const channels = nodeBuiltin<{ channel(name: string): Channel }>('node:diagnostics_channel')
  return channels === undefined ? SILENT : channels.channel(name)
}

const crypto = nodeBuiltin<NodeCrypto>('node:crypto')
const encoder = new TextEncoder()

/**
 * The SHA-256 of a string's UTF-8 bytes, in hex: Node's `crypto.hash` (or `createHash` before Node 20.12), or the
 * core's own where the runtime has no `node:crypto`. Every runtime gives the same digest.
 *
 * @example
 * sha256Utf8('abc').slice(0, 8) // 'ba7816bf'
 */
export const sha256Utf8: (text: string) => string =
  crypto === undefined
    ? (text) => sha256Hex(encoder.encode(text))
    : typeof crypto.hash === 'function'
      ? (text) => (crypto.hash as NonNullable<NodeCrypto['hash']>)('sha256', text, 'hex')
      : (text) => crypto.createHash('sha256').update(text, 'utf8').digest('hex')

/**
 * The SHA-256 of a string's UTF-16 code units (little-endian), in hex, on every runtime alike.
 *
 * @example
 * sha256Utf16le('A') === sha256Hex(new Uint8Array([0x41, 0]))
 */
export const sha256Utf16le: (text: string) => string =
  crypto === undefined
    ? (text) => sha256Hex(utf16leBytes(text))
    : (text) => crypto.createHash('sha256').update(text, 'utf16le').digest('hex')

/**
 * A random RFC 9562 version-4 UUID, from the Web Crypto API every current runtime has.
 *
 * @example
 * const instance = randomId() // '1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b'
 */
export function randomId(): string {
  return globalThis.crypto.randomUUID()
}

/**
 * Lets a timer not keep the process alive, where the runtime's timers can (Node, Bun, Deno); elsewhere a timer
 * keeps nothing alive, and there is nothing to do.
 *
 * @example
 * unrefTimer(setInterval(sweep, 60_000))
 */
export function unrefTimer(timer: unknown): void {
  ;(timer as { unref?: () => void } | undefined)?.unref?.()
}
