import fc from 'fast-check'
import { freezeDate } from '../../../../scripts/frozen-date'
import { checkIpv6Subnet, clientIpKey, ipKeyFor } from '../../src/http/ip'
import { createHttpPolicy, ipKey } from '../../src/internal-index'
import { InvalidOptionError } from '../../src/util/errors'
import { keyHash } from '../../src/util/key-hash'

// The limiters here count on the wall clock: one instant for every request (see freezeDate).
freezeDate()

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

  it('gives an address with a port or in brackets the key of the address (issue 9: a new key per source port)', () => {
    expect(ipKey('192.0.2.7:5678')).toBe('192.0.2.7')
    expect(ipKey('192.0.2.7:0')).toBe('192.0.2.7')
    expect(ipKey('[2001:db8::1]:443')).toBe('2001:db8::/64')
    expect(ipKey('[2001:db8::1]')).toBe('2001:db8::/64')
    expect(ipKey('[::ffff:192.0.2.7]:443')).toBe('192.0.2.7')
    expect(ipKey('[fe80::1%eth0]:8080', false)).toBe('fe80::1/128')
  })

  it('ignores surrounding spaces and tabs', () => {
    expect(ipKey(' 192.0.2.7 ')).toBe('192.0.2.7')
    expect(ipKey('\t2001:db8::1 ', false)).toBe('2001:db8::1/128')
    expect(ipKey(' [2001:db8::1]:443\t', false)).toBe('2001:db8::1/128')
  })

  it('reads an IPv4-mapped address as IPv4 in every spelling', () => {
    for (const spelling of [
      '::ffff:1.2.3.4',
      '::FFFF:1.2.3.4',
      '::ffff:0102:0304',
      '::ffff:102:304',
      '0:0:0:0:0:ffff:102:304',
      '0000:0000:0000:0000:0000:FFFF:0102:0304',
      '0:0::ffff:1.2.3.4',
      '[::ffff:1.2.3.4]:80',
    ]) {
      expect(ipKey(spelling)).toBe('1.2.3.4')
    }
  })

  it('reads leading zeros, case and compression of IPv6 alike', () => {
    const key = ipKey('2001:db8::1', false)
    expect(key).toBe('2001:db8::1/128')
    for (const spelling of ['2001:0db8:0000:0000:0000:0000:0000:0001', '2001:DB8:0:0:0:0:0:1', '2001:db8:0::0:1']) {
      expect(ipKey(spelling, false)).toBe(key)
    }
  })

  it('writes the longest run of zeros as :: and leaves a single zero group (RFC 5952)', () => {
    expect(ipKey('1:0:0:2:0:0:0:3', false)).toBe('1:0:0:2::3/128')
    expect(ipKey('1:0:0:2:0:0:3:4', false)).toBe('1::2:0:0:3:4/128')
    expect(ipKey('1:0:2:3:4:5:6:7', false)).toBe('1:0:2:3:4:5:6:7/128')
    expect(ipKey('0:0:0:0:0:0:0:1', false)).toBe('::1/128')
    expect(ipKey('1:0:0:0:0:0:0:0', false)).toBe('1::/128')
  })

  it('refuses a dotted quad with leading zeros, which some resolvers read as octal', () => {
    expect(ipKey('01.2.3.4')).toBe('01.2.3.4')
    expect(ipKey('1.2.3.004')).toBe('1.2.3.004')
  })

  it('keys a spelling that is almost an address as it is', () => {
    for (const text of [
      '1.2.3.4:',
      '1.2.3.4:65536',
      '1.2.3.4:80a',
      '1.2.3.4:80:90',
      '[2001:db8::1',
      '[2001:db8::1]443',
      '[1.2.3.4]:80',
      'fe80::1%',
      '1:2:3:4:5:6:7:8:9',
      '1:2:3:4:5:6:7::8',
      '::1.2.3.4.5',
      '12345::1',
      ':1::2',
      '1::2:',
    ]) {
      expect(ipKey(text)).toBe(text)
    }
  })

  it('keys malformed addresses as they are, bounded, without throwing', () => {
    expect(ipKey(undefined)).toBe('unknown')
    expect(ipKey('')).toBe('unknown')
    expect(ipKey('  ')).toBe('unknown')
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

  it('warns once when requests come without an address, and keys them together', () => {
    const warnings: string[] = []
    const keyOf = ipKeyFor(64, { warn: (message) => warnings.push(message) })
    expect([keyOf(undefined), keyOf(''), keyOf(' '), keyOf(undefined)]).toEqual([
      'unknown',
      'unknown',
      'unknown',
      'unknown',
    ])
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatch(/without a client address.*"unknown"/)
    expect(keyOf('192.0.2.7')).toBe('192.0.2.7')
    expect(warnings).toHaveLength(1)
  })

  it('warns once when an address is not an IP address, naming it by its key hash, never raw', () => {
    const warnings: string[] = []
    const keyOf = ipKeyFor(64, { warn: (message) => warnings.push(message) })
    expect(keyOf('apikey:sk_live_hidden')).toBe('apikey:sk_live_hidden')
    expect(keyOf('_other')).toBe('_other')
    expect(warnings).toEqual([expect.stringContaining(`key hash ${keyHash('apikey:sk_live_hidden')}, 21 characters`)])
    expect(warnings[0]).not.toContain('sk_live')
    expect(warnings[0]).toContain('X-Forwarded-For')
    keyOf(undefined)
    expect(warnings).toHaveLength(2)
  })

  it('warns about a request without an address even right after one with an address', () => {
    const warnings: string[] = []
    const keyOf = ipKeyFor(64, { warn: (message) => warnings.push(message) })
    expect([keyOf('192.0.2.7'), keyOf(undefined)]).toEqual(['192.0.2.7', 'unknown'])
    expect(warnings).toEqual([expect.stringContaining('without a client address')])
  })

  it('warns that the text "unknown" (what a proxy sends for a hidden client, RFC 7239 s6.2) is not an IP address', () => {
    const warnings: string[] = []
    const keyOf = ipKeyFor(64, { warn: (message) => warnings.push(message) })
    expect(keyOf('unknown')).toBe('unknown')
    expect(warnings).toEqual([
      expect.stringContaining(`key hash ${keyHash('unknown')}, 7 characters) is not an IP address`),
    ])
  })

  it('keys an address next to ::ffff:0:0/96 as IPv6, not as the IPv4 address written in it', () => {
    expect(ipKey('::fffe:1.2.3.4', false)).toBe('::fffe:102:304/128')
    expect(ipKey('::fffe:1.2.3.4')).toBe('::/64')
    expect(ipKey('1::ffff:1.2.3.4', false)).toBe('1::ffff:102:304/128')
  })

  it('writes the first of two equally long runs of zeros as :: (RFC 5952 s4.2.3)', () => {
    expect(ipKey('0:0:1:2:3:4:0:0', false)).toBe('::1:2:3:4:0:0/128')
    expect(ipKey('1:0:0:2:3:4:0:0', false)).toBe('1::2:3:4:0:0/128')
    expect(ipKey('1:2:0:0:3:4:0:0', false)).toBe('1:2::3:4:0:0/128')
  })
})

/** Ways to write one IPv6 address: case, leading zeros, compression of any run of zero groups. */
const ipv6Text = (gs: readonly number[]) =>
  fc
    .record({
      upper: fc.boolean(),
      pad: fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }),
      compress: fc.boolean(),
      pick: fc.nat(),
    })
    .map(({ upper, pad, compress, pick }) => {
      const hex = gs.map((g, i) => {
        const text = g.toString(16)
        const padded = pad[i] ? text.padStart(4, '0') : text
        return upper ? padded.toUpperCase() : padded
      })
      const runs: [number, number][] = []
      for (let i = 0; i < 8; i++) {
        if (gs[i] !== 0) continue
        for (let j = i; j < 8 && gs[j] === 0; j++) runs.push([i, j + 1])
      }
      const run = runs[pick % Math.max(1, runs.length)]
      if (!compress || run === undefined) return hex.join(':')
      return `${hex.slice(0, run[0]).join(':')}::${hex.slice(run[1]).join(':')}`
    })

/** Ways to send an address text: alone, with spaces, in brackets (IPv6), with a port, with a zone index. */
const decorated = (text: string, ipv6: boolean) =>
  fc
    .record({ space: fc.boolean(), bracket: fc.boolean(), port: fc.option(fc.integer({ min: 0, max: 65535 })) })
    .map(({ space, bracket, port }) => {
      let spelled = text
      if (ipv6 && (bracket || port !== null)) spelled = `[${spelled}]`
      if (port !== null) spelled = `${spelled}:${port}`
      return space ? ` ${spelled}\t` : spelled
    })

describe('ipKey, property: every spelling of one address gives one key, distinct clients distinct keys', () => {
  const octets = fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 4, maxLength: 4 })
  const groups8 = fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 8, maxLength: 8 })
  // Outside ::ffff:0:0/96, which is IPv4.
  const ipv6Groups = groups8.filter((gs) => !(gs.slice(0, 5).every((g) => g === 0) && gs[5] === 0xffff))

  const ipv4Spelling = (o: readonly number[]) => {
    const dotted = o.join('.')
    const mapped = [0, 0, 0, 0, 0, 0xffff, (o[0]! << 8) | o[1]!, (o[2]! << 8) | o[3]!]
    return fc.oneof(
      decorated(dotted, false),
      ipv6Text(mapped).chain((text) => decorated(text, true)),
      fc.constantFrom('::ffff:', '::FFFF:', '0:0:0:0:0:ffff:').chain((head) => decorated(head + dotted, true)),
    )
  }

  it('an IPv4 address, with a port, mapped, in brackets', () => {
    fc.assert(
      fc.property(
        octets.chain((o) => fc.tuple(fc.constant(o), ipv4Spelling(o))),
        ([o, spelling]) => {
          expect(ipKey(spelling)).toBe(o.join('.'))
        },
      ),
    )
  })

  it('an IPv6 address, in any case, compression, brackets, port or zone', () => {
    fc.assert(
      fc.property(
        ipv6Groups.chain((gs) =>
          fc.tuple(
            fc.constant(gs),
            ipv6Text(gs).chain((text) => decorated(text, true)),
            ipv6Text(gs).map((text) => `${text}%eth0`),
          ),
        ),
        ([gs, spelling, zoned]) => {
          const plain = gs.map((g) => g.toString(16)).join(':')
          expect(ipKey(spelling, false)).toBe(ipKey(plain, false))
          expect(ipKey(zoned, false)).toBe(ipKey(plain, false))
          expect(ipKey(spelling)).toBe(ipKey(plain))
        },
      ),
    )
  })

  it('distinct IPv4 addresses, and IPv6 networks outside one /64, get distinct keys', () => {
    fc.assert(
      fc.property(octets, octets, (a, b) => {
        expect(ipKey(a.join('.')) === ipKey(b.join('.'))).toBe(a.join('.') === b.join('.'))
      }),
    )
    fc.assert(
      fc.property(ipv6Groups, ipv6Groups, octets, (a, b, o) => {
        const sameNetwork = a.slice(0, 4).every((g, i) => g === b[i])
        const text = (gs: readonly number[]) => gs.map((g) => g.toString(16)).join(':')
        expect(ipKey(text(a)) === ipKey(text(b))).toBe(sameNetwork)
        expect(ipKey(text(a), false) === ipKey(text(b), false)).toBe(a.every((g, i) => g === b[i]))
        expect(ipKey(text(a))).not.toBe(ipKey(o.join('.')))
      }),
    )
  })
})

describe('checkIpv6Subnet', () => {
  it.each([
    [undefined, 64],
    [false, false],
    [1, 1],
    [64, 64],
    [128, 128],
  ])('accepts %p as %p', (value, expected) => {
    expect(checkIpv6Subnet(value)).toBe(expected)
  })

  it.each([0, 129, -64, 64.5, Number.NaN, Number.POSITIVE_INFINITY, '64', true, null])(
    'refuses %p, naming the option',
    (value) => {
      const check = () => checkIpv6Subnet(value, 'rules[1].ipv6Subnet')
      expect(check).toThrow(InvalidOptionError)
      expect(check).toThrow('option "rules[1].ipv6Subnet" must be a prefix length from 1 to 128, or false (got ')
    },
  )
})

describe('the default key of a limiter', () => {
  const factsFrom = (ip: string | undefined) => ({ ip, method: 'GET', path: '/', headers: {}, trustsProxy: () => true })
  const adapter = { ownOptions: [], rawResponse: () => ({ once: () => undefined }) }

  it('limits requests without an address together, warning once through the limiter logger', async () => {
    const warnings: string[] = []
    const policy = createHttpPolicy(
      { limit: 2, window: '1m', logger: { warn: (m) => warnings.push(m), error() {} } },
      adapter,
    )
    const actions: string[] = []
    for (const ip of [undefined, '', undefined, ' ']) actions.push((await policy.handle({}, {}, factsFrom(ip))).action)
    expect(actions).toEqual(['pass', 'pass', 'reject', 'reject'])
    expect(warnings).toEqual([expect.stringContaining('without a client address')])
  })
})

describe("clientIpKey (the adapters' ipKey)", () => {
  it('groups per /64 by default, as the limiters do, and per the ipv6Subnet it is given', () => {
    expect(clientIpKey('2001:db8:1:2::9')).toBe(ipKey('2001:db8:1:2::9'))
    expect(clientIpKey('2001:db8:1:2::9', {})).toBe('2001:db8:1:2::/64')
    expect(clientIpKey('2001:db8:1:2::9', { ipv6Subnet: 48 })).toBe('2001:db8:1::/48')
    expect(clientIpKey('2001:db8:1:2::9', { ipv6Subnet: false })).toBe('2001:db8:1:2::9/128')
    expect(clientIpKey('203.0.113.7', { ipv6Subnet: 48 })).toBe('203.0.113.7')
    expect(clientIpKey(undefined)).toBe('unknown')
  })

  it('throws an InvalidOptionError naming what is wrong in its options', () => {
    expect(() => clientIpKey('::1', { ipv6Subnet: 129 })).toThrow(InvalidOptionError)
    expect(() => clientIpKey('::1', { ipv6Subnet: 129 })).toThrow('option "ipv6Subnet" must be a prefix length')
    expect(() => clientIpKey('::1', 56 as never)).toThrow('option "ipKey options" must be an object')
    expect(() => clientIpKey('::1', null as never)).toThrow('option "ipKey options" must be an object')
  })
})
