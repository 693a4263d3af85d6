/** What {@link parseAddress} found in a text. */
export const NOT_AN_ADDRESS = 0
export const IPV4 = 4
export const IPV6 = 6
export type AddressKind = typeof NOT_AN_ADDRESS | typeof IPV4 | typeof IPV6

/**
 * The result of {@link parseAddress}, reused from call to call: parsing runs on every request, so it fills this in
 * place rather than allocating.
 *
 * @example
 * const parsed = new ParsedAddress()
 * if (parseAddress('[2001:db8::1]:443', parsed) === IPV6) parsed.words // [0x20010db8, 0, 0, 1], decorated
 */
export class ParsedAddress {
  kind: AddressKind = NOT_AN_ADDRESS
  /** IPv4: the address in `words[0]`. IPv6: the 128 bits as four big-endian 32-bit words. */
  readonly words = new Uint32Array(4)
  /** The text had more than the address: surrounding space, brackets, a port or a zone index. */
  decorated = false
  /** An IPv4 address written as IPv4-mapped IPv6. */
  mapped = false
}

/**
 * Reads a client address the way proxies and sockets spell it, so that every spelling of one address reads alike:
 * surrounding spaces, a port (`1.2.3.4:5678`, `[2001:db8::1]:443`), brackets (`[2001:db8::1]`), a zone index
 * (`fe80::1%eth0`, which names the local interface, not the client), IPv6 in any case, with or without leading
 * zeros, compressed or not, and an IPv4-mapped IPv6 address in any spelling (`::ffff:1.2.3.4`, `::FFFF:102:304`),
 * which is read as its IPv4 address. An IPv4 address must be a strict dotted quad: `01.2.3.4` is refused, since
 * some resolvers read a leading zero as octal and would see another address.
 *
 * @example
 * const parsed = new ParsedAddress()
 * parseAddress(' 192.0.2.7:5678', parsed) // IPV4, parsed.words[0] === 0xc0000207
 * parseAddress('not an address', parsed)  // NOT_AN_ADDRESS
 */
export function parseAddress(text: string, into: ParsedAddress): AddressKind {
  into.kind = NOT_AN_ADDRESS
  into.mapped = false
  let start = 0
  let end = text.length
  while (start < end && isSpace(text.charCodeAt(start))) start++
  while (end > start && isSpace(text.charCodeAt(end - 1))) end--
  // The longest spelling is a bracketed IPv6 address with an embedded IPv4 address, a zone index and a port.
  if (end - start > MAX_SPELLING_LENGTH || start === end) return NOT_AN_ADDRESS
  into.decorated = start !== 0 || end !== text.length
  const words = into.words

  // Only spaces and tabs lie past `end`, so a ']' or ':' found from `start` on is in the address text.
  if (text.charCodeAt(start) === BRACKET_OPEN) {
    const close = text.indexOf(']', start)
    if (close === -1) return NOT_AN_ADDRESS
    if (close + 1 < end && !(text.charCodeAt(close + 1) === COLON && isPort(text, close + 2, end))) {
      return NOT_AN_ADDRESS
    }
    into.decorated = true
    return parseIPv6(text, start + 1, close, into)
  }

  const colon = text.indexOf(':', start)
  if (colon === -1) {
    if (!parseIPv4(text, start, end, words, 0)) return NOT_AN_ADDRESS
    into.kind = IPV4
    return IPV4
  }
  const second = text.indexOf(':', colon + 1)
  if (second === -1) {
    // One colon: an IPv4 address and its port (every IPv6 address has at least two colons).
    if (!parseIPv4(text, start, colon, words, 0) || !isPort(text, colon + 1, end)) return NOT_AN_ADDRESS
    into.decorated = true
    into.kind = IPV4
    return IPV4
  }
  return parseIPv6(text, start, end, into)
}

const MAX_SPELLING_LENGTH = 100
const SPACE = 0x20
const TAB = 0x09
const COLON = 0x3a
const DOT = 0x2e
const ZERO = 0x30
const BRACKET_OPEN = 0x5b

/** Scratch for the sixteen-bit groups of the IPv6 address being read. */
const groups = new Uint16Array(8)

function isSpace(code: number): boolean {
  return code === SPACE || code === TAB
}

/** A port: 1 to 5 decimal digits, at most 65535, filling [from, to). */
function isPort(text: string, from: number, to: number): boolean {
  const length = to - from
  if (length < 1 || length > 5) return false
  let value = 0
  for (let i = from; i < to; i++) {
    const digit = text.charCodeAt(i) - ZERO
    if (digit < 0 || digit > 9) return false
    value = value * 10 + digit
  }
  return value <= 0xffff
}

/**
 * A strict dotted quad filling [from, to), written to `words[slot]`. The octets are combined as a 32-bit integer
 * and stored in the typed array, never returned: a number above 2^30 returned from a function is boxed on the heap.
 */
function parseIPv4(text: string, from: number, to: number, words: Uint32Array, slot: number): boolean {
  let value = 0
  let i = from
  for (let part = 0; part < 4; part++) {
    if (part > 0) {
      if (i >= to || text.charCodeAt(i) !== DOT) return false
      i++
    }
    const octetStart = i
    let octet = 0
    while (i < to && i - octetStart < 4) {
      const digit = text.charCodeAt(i) - ZERO
      if (digit < 0 || digit > 9) break
      octet = octet * 10 + digit
      i++
    }
    const digits = i - octetStart
    if (digits === 0 || octet > 255 || (digits > 1 && text.charCodeAt(octetStart) === ZERO)) return false
    value = (value << 8) | octet
  }
  if (i !== to) return false
  words[slot] = value
  return true
}

function hexDigit(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30
  const lower = code | 0x20
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x57 : -1
}

/** An IPv6 address filling [from, to), without brackets; a zone index is dropped. */
function parseIPv6(text: string, from: number, to: number, into: ParsedAddress): AddressKind {
  // Past `to` there is at most ']:' and a port (see parseAddress), so a '%' found is the zone's.
  const percent = text.indexOf('%', from)
  if (percent !== -1) {
    if (percent === to - 1) return NOT_AN_ADDRESS
    into.decorated = true
    to = percent
  }
  if (to - from < 2) return NOT_AN_ADDRESS
  let count = 0
  let gap = -1
  let i = from
  if (text.charCodeAt(i) === COLON) {
    if (text.charCodeAt(i + 1) !== COLON) return NOT_AN_ADDRESS
    gap = 0
    i += 2
  }
  while (i < to) {
    const groupStart = i
    let value = 0
    while (i < to && i - groupStart < 5) {
      const digit = hexDigit(text.charCodeAt(i))
      if (digit < 0) break
      value = value * 16 + digit
      i++
    }
    if (i < to && text.charCodeAt(i) === DOT) {
      // An embedded IPv4 address stands for the last two groups.
      if (count > 6 || !parseIPv4(text, groupStart, to, into.words, 3)) return NOT_AN_ADDRESS
      groups[count++] = into.words[3]! >>> 16
      groups[count++] = into.words[3]! & 0xffff
      i = to
      break
    }
    const digits = i - groupStart
    if (digits === 0 || digits > 4 || count === 8) return NOT_AN_ADDRESS
    groups[count++] = value
    if (i === to) break
    if (text.charCodeAt(i) !== COLON || i + 1 === to) return NOT_AN_ADDRESS
    i++
    if (text.charCodeAt(i) === COLON) {
      if (gap !== -1) return NOT_AN_ADDRESS
      gap = count
      i++
    }
  }
  if (gap === -1) {
    if (count !== 8) return NOT_AN_ADDRESS
  } else {
    // '::' stands for at least one group of zeros: move the groups after it to the end.
    if (count > 7) return NOT_AN_ADDRESS
    const after = count - gap
    for (let k = 0; k < after; k++) groups[7 - k] = groups[count - 1 - k]!
    for (let k = gap; k < 8 - after; k++) groups[k] = 0
  }
  const words = into.words
  for (let k = 0; k < 4; k++) words[k] = groups[2 * k]! * 0x10000 + groups[2 * k + 1]!
  // An IPv4-mapped address (::ffff:0:0/96, what a dual-stack socket reports for an IPv4 client) is read as IPv4.
  if (words[0] === 0 && words[1] === 0 && words[2] === 0xffff) {
    words[0] = words[3]!
    into.mapped = true
    into.kind = IPV4
    return IPV4
  }
  into.kind = IPV6
  return IPV6
}
