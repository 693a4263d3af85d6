import { describe, InvalidOptionError } from '../util/errors'
import { IPV4, IPV6, ParsedAddress, parseAddress } from './address'
import { formatIPv4, networkKey } from './ip'

/**
 * A compiled list of IP addresses and CIDR blocks, IPv4 and IPv6: the matcher behind allow and deny lists.
 *
 * @example
 * const office = compileAddressList(['192.0.2.0/24', '2001:db8:1::/48'], 'allowList')
 * office.includes('192.0.2.7')           // true
 * office.includes('::ffff:192.0.2.7')    // true: a dual-stack socket's spelling of the same client
 */
export interface AddressList {
  /**
   * Whether the address is in one of the list's blocks, read exactly as `ipKey` reads it (port, brackets, zone
   * index, spaces and spelling do not count; an IPv4-mapped IPv6 address is its IPv4 address). Something that is
   * not an address, or none, is in no list.
   */
  includes(address: string | undefined): boolean
}

/**
 * Compiles a list of addresses (`'192.0.2.7'`, `'2001:db8::1'`) and CIDR blocks (`'10.0.0.0/8'`, `'2001:db8::/32'`)
 * once, so that matching costs a parse and a binary search, with no allocation. Entries may have surrounding
 * spaces and nothing else around them. An invalid entry throws an {@link InvalidOptionError} naming it
 * (`allowList[2]`) and why: a space inside (`'10.0.0.0 /8'`); not an address; a port, brackets or zone index; a prefix length above 32 (IPv4) or 128
 * (IPv6); or bits set past the prefix (`10.0.0.1/8`, refused rather than read as `10.0.0.0/8`, since it is as often
 * a typo for a narrower block, and an allow list must not silently grow).
 *
 * IPv4 addresses count as their IPv4-mapped IPv6 addresses, so an IPv6 block that covers `::ffff:0:0/96` (`::/0`,
 * `::ffff:0:0/96`, `::ffff:10.0.0.0/104`) matches IPv4 clients in it, and an IPv4 block matches their mapped spelling.
 *
 * @example
 * const denied = compileAddressList(['203.0.113.0/24', '2001:db8:bad::/48'], 'denyList')
 * denied.includes('[2001:db8:bad::7]:443') // true
 * compileAddressList(['10.0.0.1/8'], 'allowList') // throws: option "allowList[0]" has bits set past its /8 prefix...
 */
export function compileAddressList(entries: readonly string[], option: string): AddressList {
  if (!Array.isArray(entries)) {
    throw new InvalidOptionError(option, `must be an array of IP addresses and CIDR blocks (got ${describe(entries)})`)
  }
  const blocks = entries.map((entry: unknown, i) => parseBlock(entry, `${option}[${i}]`))
  const v4 = ranges(blocks.flatMap(ipv4Part))
  // IPv6 addresses are never read inside ::ffff:0:0/96 (those are IPv4), so IPv4 blocks need no IPv6 range.
  const v6 = ranges(blocks.filter((block) => block.first < MAPPED_FIRST || block.last > MAPPED_LAST))
  const ipv4Firsts = Uint32Array.from(v4, (range) => Number(range.first))
  const ipv4Lasts = Uint32Array.from(v4, (range) => Number(range.last))
  // Each range as eight 32-bit words, its first address then its last.
  const ipv6Bounds = new Uint32Array(v6.length * 8)
  v6.forEach((range, i) => {
    ipv6Bounds.set(toWords(range.first), i * 8)
    ipv6Bounds.set(toWords(range.last), i * 8 + 4)
  })
  const parsed = new ParsedAddress()
  return {
    includes(address) {
      if (address === undefined) return false
      const kind = parseAddress(address, parsed)
      if (kind === IPV4) return inIPv4(ipv4Firsts, ipv4Lasts, parsed.words[0]!)
      if (kind === IPV6) return inIPv6(ipv6Bounds, parsed.words)
      return false
    },
  }
}

/** A block in the one 128-bit space where IPv4 address a is ::ffff:a: its first and last address. */
interface Range {
  readonly first: bigint
  readonly last: bigint
}

const MAPPED_FIRST = 0xffff_0000_0000n
const MAPPED_LAST = 0xffff_ffff_ffffn
const PREFIX = /^(0|[1-9]\d{0,2})$/
const entryParse = new ParsedAddress()

function parseBlock(entry: unknown, option: string): Range {
  if (typeof entry !== 'string') {
    throw new InvalidOptionError(option, `must be an IP address or CIDR block as a string (got ${describe(entry)})`)
  }
  const text = entry.trim()
  // '10.0.0.0 /8' would otherwise read as an address with something around it, and be refused for a port.
  if (/\s/.test(text)) {
    throw new InvalidOptionError(
      option,
      `has a space inside (got ${describe(entry)}): write the address and its prefix without spaces, such as ` +
        `${text.replace(/\s+/g, '')}`,
    )
  }
  const slash = text.indexOf('/')
  const address = slash === -1 ? text : text.slice(0, slash)
  const kind = parseAddress(address, entryParse)
  if (kind !== IPV4 && kind !== IPV6) {
    throw new InvalidOptionError(
      option,
      `must be an IP address or CIDR block, such as 192.0.2.0/24 or 2001:db8::/32 (got ${describe(entry)})`,
    )
  }
  if (entryParse.decorated) {
    throw new InvalidOptionError(
      option,
      `must be an address or CIDR block without a port, brackets or zone index (got ${describe(entry)})`,
    )
  }
  // An IPv4 address written as IPv4 has 32 bits; written as IPv6 (mapped), 128, and its prefix counts from there.
  const written = kind === IPV4 && !entryParse.mapped ? 32 : 128
  const prefixText = slash === -1 ? String(written) : text.slice(slash + 1)
  const prefix = PREFIX.test(prefixText) ? Number(prefixText) : Number.NaN
  if (!(prefix <= written)) {
    throw new InvalidOptionError(
      option,
      `must have a prefix length from 0 to ${written} for an ${written === 32 ? 'IPv4' : 'IPv6'} block (got ${describe(entry)})`,
    )
  }
  const words = entryParse.words
  const value = kind === IPV4 ? MAPPED_FIRST + BigInt(words[0]!) : fromWords(words)
  const hostBits = BigInt(written - prefix)
  const hostMask = (1n << hostBits) - 1n
  if ((value & hostMask) !== 0n) {
    const network = value & ~hostMask
    const spelled =
      written === 32 ? `${formatIPv4(Number(network - MAPPED_FIRST))}/${prefix}` : networkKey(toWords(network), prefix)
    throw new InvalidOptionError(
      option,
      `has bits set past its /${prefix} prefix (got ${describe(entry)}): write the block's network, ${spelled}, ` +
        `or a longer prefix if a narrower block was meant`,
    )
  }
  return { first: value, last: value | hostMask }
}

/** The IPv4 addresses of a block, counted from 0.0.0.0: none, all, or the block itself when inside ::ffff:0:0/96. */
function ipv4Part(range: Range): Range[] {
  if (range.last < MAPPED_FIRST || range.first > MAPPED_LAST) return []
  const first = range.first > MAPPED_FIRST ? range.first : MAPPED_FIRST
  const last = range.last < MAPPED_LAST ? range.last : MAPPED_LAST
  return [{ first: first - MAPPED_FIRST, last: last - MAPPED_FIRST }]
}

/** Sorted, with overlapping and adjacent ranges merged, so that a binary search finds the one range to check. */
function ranges(list: Range[]): Range[] {
  const sorted = [...list].sort((a, b) => (a.first < b.first ? -1 : a.first > b.first ? 1 : 0))
  const merged: Range[] = []
  for (const range of sorted) {
    const last = merged[merged.length - 1]
    if (last !== undefined && range.first <= last.last + 1n) {
      if (range.last > last.last) merged[merged.length - 1] = { first: last.first, last: range.last }
    } else {
      merged.push(range)
    }
  }
  return merged
}

function fromWords(words: Uint32Array): bigint {
  let value = 0n
  for (const word of words) value = (value << 32n) | BigInt(word)
  return value
}

function toWords(value: bigint): Uint32Array {
  return Uint32Array.from([96n, 64n, 32n, 0n], (shift) => Number((value >> shift) & 0xffff_ffffn))
}

function inIPv4(firsts: Uint32Array, lasts: Uint32Array, address: number): boolean {
  // The last range that starts at or before the address; the address is in the list if it is in that one.
  let low = 0
  let high = firsts.length - 1
  let found = -1
  while (low <= high) {
    const middle = (low + high) >>> 1
    if (firsts[middle]! <= address) {
      found = middle
      low = middle + 1
    } else {
      high = middle - 1
    }
  }
  return found !== -1 && address <= lasts[found]!
}

function inIPv6(bounds: Uint32Array, words: Uint32Array): boolean {
  let low = 0
  let high = bounds.length / 8 - 1
  let found = -1
  while (low <= high) {
    const middle = (low + high) >>> 1
    if (compare(bounds, middle * 8, words) <= 0) {
      found = middle
      low = middle + 1
    } else {
      high = middle - 1
    }
  }
  return found !== -1 && compare(bounds, found * 8 + 4, words) >= 0
}

/** The 128-bit number at bounds[offset..offset+4) compared with the address: negative, zero or positive. */
function compare(bounds: Uint32Array, offset: number, words: Uint32Array): number {
  for (let i = 0; i < 4; i++) {
    const difference = bounds[offset + i]! - words[i]!
    if (difference !== 0) return difference
  }
  return 0
}
