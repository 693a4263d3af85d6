import { warnOnce } from '../util/diagnostics'
import { describe, InvalidOptionError } from '../util/errors'
import { keyHash } from '../util/key-hash'
import type { Logger } from '../util/logger'
import { type AddressKind, IPV4, IPV6, NOT_AN_ADDRESS, ParsedAddress, parseAddress } from './address'

/** The key of a request without a client address, or with one that is only spaces. */
const UNKNOWN = 'unknown'
// An unparsable "address" (from a misconfigured proxy) still keys its requests, but cannot bloat the store keys.
const MAX_UNPARSED_LENGTH = 64

const MISSING: AddressKey = Object.freeze({ key: UNKNOWN, kind: NOT_AN_ADDRESS })
// Scratch for the parser, read only within addressKey: nothing is handed on through it.
const parsed = new ParsedAddress()
// The spelling most requests arrive with, tested by a compiled regular expression, which is faster than any loop over
// charCodeAt; the parser agrees with it (a strict dotted quad) and reads every other spelling.
const DOTTED_QUAD = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/
const MAPPED_PREFIX = '::ffff:'

/**
 * The rate-limiting key of a client address: an IPv4 address as its dotted quad, an IPv6 address reduced to its
 * `/ipv6Subnet` network (so one host cannot dodge its limit by rotating through the 2^64 addresses its ISP hands
 * out), and an IPv4-mapped IPv6 address (`::ffff:1.2.3.4`, what a dual-stack socket reports) as its IPv4 address.
 * Every spelling of one address gives one key: a port, brackets, a zone index, surrounding spaces, case, leading
 * zeros and compression do not count (some load balancers forward `1.2.3.4:5678`, a new port per connection).
 * Anything that is not an address is keyed as it is, trimmed and bounded in length; a missing or blank address is
 * `'unknown'`.
 *
 * @example
 * ipKey('2001:db8:1:2:3:4:5:6')   // '2001:db8:1:2::/64'
 * ipKey('[2001:DB8:1:2::9]:443')  // '2001:db8:1:2::/64'
 * ipKey('::ffff:192.0.2.7')       // '192.0.2.7'
 * ipKey('192.0.2.7:5678')         // '192.0.2.7'
 * ipKey('2001:db8::1', 128)       // '2001:db8::1/128'
 */
export function ipKey(address: string | undefined, ipv6Subnet: number | false = 64): string {
  return addressKey(address, ipv6Subnet).key
}

/**
 * A client address's key (see {@link ipKey}) and what the address was: an IPv4 or IPv6 address, or
 * `NOT_AN_ADDRESS` (missing, blank, or text keyed as it is).
 *
 * @example
 * addressKey('2001:db8::1')    // { key: '2001:db8::/64', kind: IPV6 }
 * addressKey('not-an-address') // { key: 'not-an-address', kind: NOT_AN_ADDRESS }
 */
export interface AddressKey {
  readonly key: string
  readonly kind: AddressKind
}

/**
 * {@link ipKey} with the kind of address it found, so a caller that warns about what is not an address needs no
 * second look at it.
 *
 * @example
 * const { key, kind } = addressKey(req.ip, 64)
 * if (kind === NOT_AN_ADDRESS) console.warn(`keyed as it is: ${key}`)
 */
export function addressKey(address: string | undefined, ipv6Subnet: number | false = 64): AddressKey {
  if (address === undefined) return MISSING
  if (DOTTED_QUAD.test(address)) return { key: address, kind: IPV4 }
  // What a dual-stack socket reports for an IPv4 client.
  if (address.startsWith(MAPPED_PREFIX)) {
    const tail = address.slice(MAPPED_PREFIX.length)
    if (DOTTED_QUAD.test(tail)) return { key: tail, kind: IPV4 }
  }
  const kind = parseAddress(address, parsed)
  if (kind === IPV4) {
    return { key: parsed.decorated || parsed.mapped ? formatIPv4(parsed.words[0]!) : address, kind }
  }
  if (kind === IPV6) return { key: networkKey(parsed.words, ipv6Subnet === false ? 128 : ipv6Subnet), kind }
  const text = address.trim()
  return text === '' ? MISSING : { key: text.slice(0, MAX_UNPARSED_LENGTH), kind: NOT_AN_ADDRESS }
}

/**
 * Options of the adapters' `ipKey(req, options)`: how to group IPv6 clients, as the limiters' own `ipv6Subnet`.
 *
 * @example
 * const options: IpKeyOptions = { ipv6Subnet: 56 } // one key per /56, for ISPs that hand out a /56 per home
 */
export interface IpKeyOptions {
  /** The prefix length IPv6 clients are counted by, from 1 to 128, or false for whole addresses. Default: 64. */
  readonly ipv6Subnet?: number | false
}

/**
 * The key an adapter's `ipKey(req, options)` gives for the framework's client address: {@link ipKey} with the
 * `ipv6Subnet` option checked (an invalid one throws an InvalidOptionError naming it).
 *
 * @example
 * clientIpKey('2001:db8:1:2::9')                      // '2001:db8:1:2::/64'
 * clientIpKey('2001:db8:1:2::9', { ipv6Subnet: 48 })  // '2001:db8:1::/48'
 */
export function clientIpKey(address: string | undefined, options?: IpKeyOptions): string {
  if (options === undefined) return ipKey(address)
  if (options === null || typeof options !== 'object') {
    throw new InvalidOptionError(
      'ipKey options',
      `must be an object such as { ipv6Subnet: 56 } (got ${describe(options)})`,
    )
  }
  return ipKey(address, checkIpv6Subnet(options.ipv6Subnet))
}

/** Where a limiter reports an address it cannot count as given. */
export type AddressWarnings = Pick<Logger, 'warn'>

/**
 * {@link ipKey} for one limiter, warning once (each) when the framework reports no client address (all such
 * requests then share the key `'unknown'`) or one that is not an IP address (keyed as it is): either means the
 * limit does not count clients the way the developer thinks. See SLUICE_NO_CLIENT_ADDRESS and SLUICE_NOT_AN_ADDRESS
 * in docs/diagnostics.md.
 *
 * @example
 * const keyOf = ipKeyFor(64, console)
 * keyOf(req.ip) // '192.0.2.7'; keyOf(undefined) logs once and gives 'unknown'
 */
export function ipKeyFor(ipv6Subnet: number | false, logger: AddressWarnings): (address: string | undefined) => string {
  let warnedMissing = false
  let warnedMalformed = false
  return function clientKey(address) {
    const { key, kind } = addressKey(address, ipv6Subnet)
    if (kind !== NOT_AN_ADDRESS) return key
    if (address === undefined || address.trim() === '') {
      if (warnedMissing) return key
      warnedMissing = true
      warnOnce(
        logger,
        'SLUICE_NO_CLIENT_ADDRESS',
        'sluice: a request came without a client address (its connection may have closed already); requests ' +
          `without one share the key "${UNKNOWN}". Give \`key\` if your server does not report addresses.`,
      )
    } else if (!warnedMalformed) {
      warnedMalformed = true
      warnOnce(
        logger,
        'SLUICE_NOT_AN_ADDRESS',
        // The value is the key, and keys leave the process hashed (issue 25 item 7): a header a client wrote can
        // carry anything, a token included. keyHash(value) of a suspect finds it.
        `sluice: a client address (key hash ${keyHash(key)}, ${key.length} characters) is not an IP address, so it ` +
          'is used as the key as it is. Check what the proxy in front of this server sends in X-Forwarded-For.',
      )
    }
    return key
  }
}

/** Validates the `ipv6Subnet` option: a prefix length from 1 to 128, or false for whole addresses. */
export function checkIpv6Subnet(value: unknown, option = 'ipv6Subnet'): number | false {
  if (value === undefined) return 64
  if (value === false) return false
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 128) {
    throw new InvalidOptionError(option, `must be a prefix length from 1 to 128, or false (got ${describe(value)})`)
  }
  return value
}

/**
 * The dotted quad of an IPv4 address held as an unsigned 32-bit number.
 *
 * @example
 * formatIPv4(0xc0000207) // '192.0.2.7'
 */
export function formatIPv4(value: number): string {
  return `${value >>> 24}.${(value >>> 16) & 0xff}.${(value >>> 8) & 0xff}.${value & 0xff}`
}

/** Scratch for the sixteen-bit groups of the network being written. */
const networkGroups = new Uint16Array(8)
// Number.prototype.toString(16) is a call into the runtime, several times slower than two lookups.
const BYTE_HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16))
const PADDED_BYTE_HEX = BYTE_HEX.map((hex) => hex.padStart(2, '0'))

/**
 * The `/bits` network of an IPv6 address given as four 32-bit words, in RFC 5952 text (lower case, no leading
 * zeros, '::' for the longest run of zero groups).
 *
 * @example
 * networkKey(new Uint32Array([0x20010db8, 1, 0, 1]), 48) // '2001:db8::/48'
 */
export function networkKey(words: Uint32Array, bits: number): string {
  // The groups with the bits past the prefix length cleared, and the longest run of two or more zero groups (the
  // first of equals), which RFC 5952 s4.2 writes as '::'.
  let bestStart = -1
  let bestLength = 1
  let runStart = -1
  for (let i = 0; i < 8; i++) {
    const keep = bits - i * 16
    const whole = i % 2 === 0 ? words[i >> 1]! >>> 16 : words[i >> 1]! & 0xffff
    const value = keep >= 16 ? whole : keep <= 0 ? 0 : whole & ((0xffff << (16 - keep)) & 0xffff)
    networkGroups[i] = value
    if (value !== 0) {
      runStart = -1
    } else {
      if (runStart === -1) runStart = i
      if (i - runStart + 1 > bestLength) {
        bestStart = runStart
        bestLength = i - runStart + 1
      }
    }
  }
  let text = ''
  for (let i = 0; i < 8; i++) {
    if (i === bestStart) {
      text += '::'
      i += bestLength - 1
    } else {
      if (i > 0 && i !== bestStart + bestLength) text += ':'
      const value = networkGroups[i]!
      text += value < 0x100 ? BYTE_HEX[value] : BYTE_HEX[value >> 8]! + PADDED_BYTE_HEX[value & 0xff]!
    }
  }
  return `${text}/${bits}`
}
