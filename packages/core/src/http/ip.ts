import { describe, InvalidOptionError } from '../errors'

/**
 * The rate-limiting key of a client address: an IPv4 address as it is, an IPv6 address reduced to its
 * `/ipv6Subnet` network (so one host cannot dodge its limit by rotating through the 2^64 addresses its ISP
 * hands out), and an IPv4-mapped IPv6 address (`::ffff:1.2.3.4`, what a dual-stack socket reports) as its IPv4
 * address. Anything that is not an address is used as it is, bounded in length; a missing address is `'unknown'`.
 *
 * @example
 * ipKey('2001:db8:1:2:3:4:5:6')   // '2001:db8:1:2::/64'
 * ipKey('::ffff:192.0.2.7')       // '192.0.2.7'
 * ipKey('2001:db8::1', 128)       // '2001:db8::1/128'
 */
export function ipKey(address: string | undefined, ipv6Subnet: number | false = 64): string {
  if (address === undefined || address.length === 0) return 'unknown'
  if (isIPv4(address)) return address
  // The common dual-stack case, without parsing the whole IPv6 address.
  if (address.startsWith('::ffff:') && isIPv4(address.slice(7))) return address.slice(7)
  const groups = parseIPv6(address)
  if (groups === undefined) return address.slice(0, MAX_UNPARSED_LENGTH)
  if (groups[0] === 0 && groups[1] === 0 && groups[2] === 0 && groups[3] === 0 && groups[4] === 0) {
    if (groups[5] === 0xffff) return `${groups[6]! >> 8}.${groups[6]! & 0xff}.${groups[7]! >> 8}.${groups[7]! & 0xff}`
  }
  const bits = ipv6Subnet === false ? 128 : ipv6Subnet
  const masked = groups.map((group, i) => {
    const keep = Math.min(16, Math.max(0, bits - i * 16))
    return keep === 0 ? 0 : group & ((0xffff << (16 - keep)) & 0xffff)
  })
  return `${formatIPv6(masked)}/${bits}`
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

// An unparsable "address" (from a misconfigured proxy) still keys its requests, but cannot bloat the store keys.
const MAX_UNPARSED_LENGTH = 64
const HEX_GROUP = /^[0-9a-fA-F]{1,4}$/

/**
 * Four numbers from 0 to 255, without leading zeros, joined by dots. Read by hand: it runs on every request that is
 * keyed by IP, and a regular expression cost a busy server about a quarter of a microsecond a request.
 */
function isIPv4(address: string): boolean {
  let parts = 0
  let value = 0
  let digits = 0
  for (let i = 0; i <= address.length; i++) {
    const char = i < address.length ? address.charCodeAt(i) : DOT // the end closes the last number
    if (char === DOT) {
      if (digits === 0 || ++parts > 4) return false
      value = 0
      digits = 0
    } else if (char >= ZERO && char <= NINE) {
      if (digits === 1 && value === 0) return false // a leading zero
      value = value * 10 + (char - ZERO)
      if (++digits > 3 || value > 255) return false
    } else {
      return false
    }
  }
  return parts === 4
}

const DOT = 46
const ZERO = 48
const NINE = 57

/** The eight 16-bit groups of an IPv6 address, or undefined when it is not one. */
function parseIPv6(address: string): number[] | undefined {
  // A zone index (fe80::1%eth0) names the local interface, not the client.
  const zone = address.indexOf('%')
  let text = zone === -1 ? address : address.slice(0, zone)
  if (text.length < 2 || text.length > 45) return undefined
  let tail: number[] = []
  const lastColon = text.lastIndexOf(':')
  if (lastColon === -1) return undefined
  const last = text.slice(lastColon + 1)
  if (last.includes('.')) {
    // An embedded IPv4 address (::ffff:1.2.3.4) stands for the last two groups.
    if (!isIPv4(last)) return undefined
    const [a, b, c, d] = last.split('.').map(Number) as [number, number, number, number]
    tail = [(a << 8) | b, (c << 8) | d]
    text = text.slice(0, lastColon + 1)
    if (!text.endsWith('::')) text = text.slice(0, -1)
  }
  const halves = text.split('::')
  if (halves.length > 2) return undefined
  const head = parseGroups(halves[0] as string)
  if (head === undefined) return undefined
  if (halves.length === 1) return head.length + tail.length === 8 ? [...head, ...tail] : undefined
  const rest = parseGroups(halves[1] as string)
  if (rest === undefined) return undefined
  const missing = 8 - tail.length - head.length - rest.length
  if (missing < 1) return undefined
  return [...head, ...new Array<number>(missing).fill(0), ...rest, ...tail]
}

function parseGroups(text: string): number[] | undefined {
  if (text === '') return []
  const parts = text.split(':')
  if (!parts.every((part) => HEX_GROUP.test(part))) return undefined
  return parts.map((part) => Number.parseInt(part, 16))
}

/** RFC 5952 text: lower case, no leading zeros, the longest run of two or more zero groups as '::'. */
function formatIPv6(groups: readonly number[]): string {
  let bestStart = -1
  let bestLength = 1
  for (let i = 0; i < groups.length; ) {
    if (groups[i] !== 0) {
      i++
      continue
    }
    let j = i
    while (j < groups.length && groups[j] === 0) j++
    if (j - i > bestLength) {
      bestStart = i
      bestLength = j - i
    }
    i = j
  }
  const hex = groups.map((group) => group.toString(16))
  if (bestStart === -1) return hex.join(':')
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`
}
