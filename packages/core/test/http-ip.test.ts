import fc from 'fast-check'
import { ipKey } from '../src'

describe('ipKey', () => {
  it('keeps an IPv4 address as it is', () => {
    expect(ipKey('192.0.2.7')).toBe('192.0.2.7')
  })

  it('counts an IPv4-mapped IPv6 address as its IPv4 address', () => {
    expect(ipKey('::ffff:192.0.2.7')).toBe('192.0.2.7')
    expect(ipKey('::FFFF:c000:0207')).toBe('192.0.2.7')
    expect(ipKey('0:0:0:0:0:ffff:192.0.2.7')).toBe('192.0.2.7')
  })

  it('groups IPv6 addresses per /64 by default', () => {
    expect(ipKey('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64')
    expect(ipKey('2001:DB8:1:2::ffff')).toBe('2001:db8:1:2::/64')
    expect(ipKey('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64')
  })

  it('takes the prefix length from ipv6Subnet, false meaning the whole address', () => {
    expect(ipKey('2001:db8:1:2:3:4:5:6', 48)).toBe('2001:db8:1::/48')
    expect(ipKey('2001:db8:1:2:3:4:5:6', 56)).toBe('2001:db8:1::/56')
    expect(ipKey('2001:db8:1:ff:3:4:5:6', 56)).toBe('2001:db8:1::/56')
    expect(ipKey('2001:db8:1:1ff:3:4:5:6', 56)).toBe('2001:db8:1:100::/56')
    expect(ipKey('2001:db8::1', false)).toBe('2001:db8::1/128')
    expect(ipKey('2001:db8::1', 128)).toBe('2001:db8::1/128')
  })

  it('reads the compressed forms, embedded IPv4 and zone indexes', () => {
    expect(ipKey('::1', false)).toBe('::1/128')
    expect(ipKey('::', false)).toBe('::/128')
    expect(ipKey('fe80::1%eth0', false)).toBe('fe80::1/128')
    expect(ipKey('64:ff9b::192.0.2.7', false)).toBe('64:ff9b::c000:207/128')
  })

  it('keys malformed addresses as they are, bounded, without throwing', () => {
    expect(ipKey(undefined)).toBe('unknown')
    expect(ipKey('')).toBe('unknown')
    expect(ipKey('not-an-ip')).toBe('not-an-ip')
    expect(ipKey('1:2:3:4:5:6:7:8:9')).toBe('1:2:3:4:5:6:7:8:9')
    expect(ipKey('1::2::3')).toBe('1::2::3')
    expect(ipKey('256.1.1.1')).toBe('256.1.1.1')
    expect(ipKey('::ffff:300.1.1.1')).toBe('::ffff:300.1.1.1')
    expect(ipKey('x'.repeat(1000))).toHaveLength(64)
  })

  it('never throws, whatever the string', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (text) => {
        expect(typeof ipKey(text)).toBe('string')
      }),
    )
  })

  const group = fc.integer({ min: 0, max: 0xffff })
  const groups = fc.array(group, { minLength: 8, maxLength: 8 })
  const full = (gs: readonly number[]) => gs.map((g) => g.toString(16)).join(':')

  it('gives two addresses the same key exactly when their first 64 bits agree', () => {
    fc.assert(
      fc.property(groups, groups, (a, b) => {
        // Mapped IPv4 (::ffff:0:0/96) is keyed as IPv4 instead; keep both out of that range.
        fc.pre(a[0] !== 0 && b[0] !== 0)
        const sameNetwork = a.slice(0, 4).every((g, i) => g === b[i])
        expect(ipKey(full(a)) === ipKey(full(b))).toBe(sameNetwork)
        expect(ipKey(full(a))).toBe(ipKey(full([...a.slice(0, 4), ...b.slice(4)])))
      }),
    )
  })

  it('reads the same address in full and compressed form alike', () => {
    fc.assert(
      fc.property(groups, fc.integer({ min: 0, max: 7 }), fc.integer({ min: 1, max: 8 }), (gs, at, length) => {
        fc.pre(gs[0] !== 0)
        const zeroed = gs.map((g, i) => (i >= at && i < at + length ? 0 : g))
        const end = Math.min(8, at + length)
        const head = zeroed.slice(0, at).map((g) => g.toString(16))
        const tail = zeroed.slice(end).map((g) => g.toString(16))
        const compressed = `${head.join(':')}::${tail.join(':')}`
        fc.pre(end - at < 8 || at === 0)
        expect(ipKey(compressed, false)).toBe(ipKey(full(zeroed), false))
      }),
    )
  })
})

test('a dotted quad is an IPv4 address exactly when each part is 0 to 255 without a leading zero', () => {
  const dottedQuad = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/
  const text = fc.string({ unit: fc.constantFrom('0', '1', '2', '5', '9', '.', 'a', ' '), maxLength: 17 })
  const near = fc
    .array(fc.oneof(fc.integer({ min: 0, max: 300 }).map(String), fc.constantFrom('00', '01', '007', '')), {
      minLength: 3,
      maxLength: 5,
    })
    .map((parts) => parts.join('.'))
  fc.assert(
    fc.property(fc.oneof(text, near), (address) => {
      // A dual-stack socket's form: the IPv4 address is taken out of it only when it is one.
      expect(ipKey(`::ffff:${address}`) === address).toBe(dottedQuad.test(address))
    }),
    { numRuns: 5000 },
  )
})
