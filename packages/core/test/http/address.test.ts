// parseAddress read spelling by spelling: the kind, the words, and whether the text had more than the address. Written
// for the mutants of http/address.ts that the first full mutation run of the core left alive (bounds of the port and
// the octets, the zone index, '::' placement, hex digits, and what counts as IPv4-mapped).
import { IPV4, IPV6, NOT_AN_ADDRESS, ParsedAddress, parseAddress } from '../../src/http/address'

const read = (text: string) => {
  const parsed = new ParsedAddress()
  const kind = parseAddress(text, parsed)
  return { kind, words: [...parsed.words], decorated: parsed.decorated, mapped: parsed.mapped }
}
const v4 = (text: string) => read(text).words[0]
const v6 = (text: string) => read(text).words
/** Each text is no address; a failure names the text. */
const expectNoAddress = (texts: readonly string[]) => {
  for (const text of texts) expect([text, read(text).kind]).toEqual([text, NOT_AN_ADDRESS])
}

test('a bare dotted quad is undecorated; spaces, a port or brackets decorate it', () => {
  expect(read('1.2.3.4')).toMatchObject({ kind: IPV4, decorated: false, mapped: false })
  expect(v4('1.2.3.4')).toBe(0x01020304)
  expect(read(' 1.2.3.4')).toMatchObject({ kind: IPV4, decorated: true })
  expect(read('1.2.3.4\t')).toMatchObject({ kind: IPV4, decorated: true })
  expect(read('1.2.3.4:80')).toMatchObject({ kind: IPV4, decorated: true })
  expect(read('2001:db8::1')).toMatchObject({ kind: IPV6, decorated: false })
  expect(read('[2001:db8::1]')).toMatchObject({ kind: IPV6, decorated: true })
})

test('empty, blank and overlong texts are no address', () => {
  expectNoAddress(['', '   ', '\t'])
  // 100 characters is the longest spelling read; spaces around it do not count.
  const longest = `[1111:2222:3333:4444:5555:6666:1.2.3.4%${'z'.repeat(100 - 46)}]:65535`
  expect(longest).toHaveLength(100)
  expect(read(longest).kind).toBe(IPV6)
  expect(read(`  ${longest}  `).kind).toBe(IPV6)
  expect(read(longest.replace('%', '%z')).kind).toBe(NOT_AN_ADDRESS)
})

test('ports: 1 to 5 digits (no sign, no dot, leading zeros counted) up to 65535, after an IPv4 address or a bracketed IPv6 one', () => {
  for (const text of ['1.2.3.4:0', '1.2.3.4:65535', '[::1]:443', '[::1]:65535'])
    expect(read(text).kind).not.toBe(NOT_AN_ADDRESS)
  expectNoAddress([
    '1.2.3.4:',
    '1.2.3.4:65536',
    '1.2.3.4:123456',
    '1.2.3.4:8a',
    '1.2.3.4:-1',
    '1.2.3.4:+80',
    '1.2.3.4:8.0',
    '1.2.3.4:000080',
    '[::1]:',
    '[::1]:65536',
    '[::1]x',
    '[::1',
  ])
})

test('dotted quads are strict', () => {
  expect(v4('0.0.0.0')).toBe(0)
  expect(v4('255.255.255.255')).toBe(0xffffffff)
  expectNoAddress(['1.2.3', '1.2.3.4.5', '256.1.1.1', '01.2.3.4', '1.2.3.04', '1.2.3.1234', '1.2..4', '1.2.3.4.'])
  // Digits and dots only: no other separator, no letter.
  expectNoAddress(['1,2,3,4', '1-2-3-4', '1.2 3.4', '1x2.3.4', 'a.2.3.4', '1.2.3.4a', '1.2.3.a4', '::ffff:1.2.3.4a'])
})

test('IPv6 in every spelling of one address reads alike', () => {
  const expected = [0x20010db8, 0, 0, 1]
  for (const text of [
    '2001:db8::1',
    '2001:DB8::1',
    '2001:0db8:0000:0000:0000:0000:0000:0001',
    '2001:db8:0:0:0:0:0:1',
  ]) {
    expect([text, v6(text)]).toEqual([text, expected])
  }
  expect(v6('::')).toEqual([0, 0, 0, 0])
  expect(v6('1:2:3:4:5:6:7::')).toEqual([0x10002, 0x30004, 0x50006, 0x70000])
  expect(v6('::2:3:4:5:6:7:8')).toEqual([0x2, 0x30004, 0x50006, 0x70008])
  expect(v6('ABCD:ef01::')).toEqual([0xabcdef01, 0, 0, 0])
  expect(v6('::1.2.3.4')).toEqual([0, 0, 0, 0x01020304]) // IPv4-compatible, not mapped: stays IPv6
  expect(read('::1.2.3.4').kind).toBe(IPV6)
})

test('a zone index is dropped, and must name something', () => {
  expect(read('fe80::1%eth0')).toMatchObject({ kind: IPV6, decorated: true })
  expect(v6('fe80::1%eth0')).toEqual([0xfe800000, 0, 0, 1])
  expect(read('fe80::1%').kind).toBe(NOT_AN_ADDRESS)
  expect(read('[fe80::1%eth0]:80').kind).toBe(IPV6)
})

test('malformed IPv6 is no address: one leading or trailing colon, three colons, a character that is not hex', () => {
  expectNoAddress([
    '1::2::3',
    '12345::1',
    '1:2:3:4:5:6:7:8:9',
    '1:2:3:4:5:6:7:8::',
    ':1::',
    '1:',
    '1:2:3:4:5:6:7',
    'g::1',
    'fg::1',
    '1:2:3:4:5:6:7:1.2.3.4',
    '::1.2.3',
    ':',
    ':12:3:4:5:6:7:8',
    '1:::2',
    ':::',
    '::::',
    '::1:',
    '1:2:3:4:5:6:7:8:',
    '::@',
    '::`',
    '2001:db8::1@',
    '1g2::',
    '2001:db8::1 2',
  ])
})

test('IPv4-mapped in any spelling is read as IPv4; the neighbours of ::ffff:0:0/96 are not', () => {
  expect(read('::ffff:1.2.3.4')).toMatchObject({ kind: IPV4, mapped: true })
  expect(v4('::ffff:1.2.3.4')).toBe(0x01020304)
  expect(v4('::FFFF:102:304')).toBe(0x01020304)
  expect(v4('0:0:0:0:0:ffff:0102:0304')).toBe(0x01020304)
  for (const text of [
    '1::ffff:1.2.3.4',
    '0:1::ffff:102:304',
    '::1:ffff:102:304',
    '::1:0:ffff:102:304',
    '::fffe:102:304',
  ]) {
    expect([text, read(text).kind, read(text).mapped]).toEqual([text, IPV6, false])
  }
})
