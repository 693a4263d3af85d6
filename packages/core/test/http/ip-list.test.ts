import fc from 'fast-check'
import { InvalidOptionError } from '../../src'
import { compileAddressList } from '../../src/http/ip-list'

describe('compileAddressList', () => {
  it('matches the addresses inside its blocks, first and last included, and no other', () => {
    const list = compileAddressList(['10.0.0.0/8', '192.0.2.7', '2001:db8:1::/48', '2001:db8:2::9'], 'allowList')
    for (const inside of ['10.0.0.0', '10.255.255.255', '10.1.2.3', '192.0.2.7', '2001:db8:1::', '2001:db8:2::9']) {
      expect([inside, list.includes(inside)]).toEqual([inside, true])
    }
    expect(list.includes('2001:db8:1:ffff:ffff:ffff:ffff:ffff')).toBe(true)
    for (const outside of [
      '9.255.255.255',
      '11.0.0.0',
      '192.0.2.6',
      '192.0.2.8',
      '2001:db8:0:ffff::',
      '2001:db8:2::8',
    ]) {
      expect([outside, list.includes(outside)]).toEqual([outside, false])
    }
  })

  it('reads an address as ipKey does: port, brackets, zone, spaces and spelling do not count', () => {
    const list = compileAddressList(['10.0.0.0/8', '2001:db8::/32'], 'allowList')
    for (const spelling of [
      '10.1.2.3:5678',
      ' 10.1.2.3 ',
      '::ffff:10.1.2.3',
      '::FFFF:0a01:0203',
      '[::ffff:10.1.2.3]:443',
      '[2001:DB8::1]:443',
      '2001:0db8:0000:0000:0000:0000:0000:0001',
      '2001:db8::1%eth0',
    ]) {
      expect([spelling, list.includes(spelling)]).toEqual([spelling, true])
    }
  })

  it('matches IPv4 clients against IPv6 blocks that cover ::ffff:0:0/96, and mapped clients against IPv4 blocks', () => {
    expect(compileAddressList(['::/0'], 'denyList').includes('203.0.113.9')).toBe(true)
    expect(compileAddressList(['::ffff:0:0/96'], 'denyList').includes('203.0.113.9')).toBe(true)
    const mapped = compileAddressList(['::ffff:10.0.0.0/104'], 'denyList')
    expect(mapped.includes('10.9.9.9')).toBe(true)
    expect(mapped.includes('11.0.0.0')).toBe(false)
    expect(mapped.includes('2001:db8::1')).toBe(false)
    expect(compileAddressList(['0.0.0.0/0'], 'denyList').includes('::ffff:1.2.3.4')).toBe(true)
    expect(compileAddressList(['0.0.0.0/0'], 'denyList').includes('2001:db8::1')).toBe(false)
    expect(compileAddressList(['2001:db8::/32'], 'denyList').includes('1.2.3.4')).toBe(false)
  })

  it('matches an IPv4 address written mapped in the list, down to the first and last IPv4 address', () => {
    const edges = compileAddressList(['::ffff:0.0.0.0', '::ffff:255.255.255.255'], 'denyList')
    for (const client of ['0.0.0.0', '255.255.255.255', '::ffff:0:0', '[::ffff:255.255.255.255]:80']) {
      expect([client, edges.includes(client)]).toEqual([client, true])
    }
    for (const client of ['0.0.0.1', '255.255.255.254', '::fffe:ffff:ffff', '::1:0:0:0']) {
      expect([client, edges.includes(client)]).toEqual([client, false])
    }
  })

  it('matches IPv6 blocks below ::ffff:0:0 (loopback, IPv4-compatible ::/96) as IPv6 only, never as IPv4 clients', () => {
    const loopback = compileAddressList(['127.0.0.1', '::1'], 'allowList')
    for (const inside of ['::1', '[::1]:443', '0:0:0:0:0:0:0:1', '127.0.0.1', '::ffff:127.0.0.1']) {
      expect([inside, loopback.includes(inside)]).toEqual([inside, true])
    }
    for (const outside of ['0.0.0.0', '0.0.0.1', '::', '::2', '127.0.0.2']) {
      expect([outside, loopback.includes(outside)]).toEqual([outside, false])
    }
    // ::1.2.3.4 is the deprecated IPv4-compatible spelling: an IPv6 address, not the IPv4 client 1.2.3.4.
    const compatible = compileAddressList(['::/96'], 'denyList')
    expect(compatible.includes('::1.2.3.4')).toBe(true)
    expect(compatible.includes('::1')).toBe(true)
    for (const client of ['0.0.0.0', '1.2.3.4', '255.255.255.255', '::ffff:1.2.3.4']) {
      expect([client, compatible.includes(client)]).toEqual([client, false])
    }
  })

  it('matches nothing that is not an address, and never throws', () => {
    const list = compileAddressList(['0.0.0.0/0', '::/0'], 'allowList')
    for (const text of [undefined, '', 'unknown', '1.2.3.4:99999', '01.2.3.4', '[1.2.3.4]']) {
      expect(list.includes(text)).toBe(false)
    }
    fc.assert(
      fc.property(fc.string({ maxLength: 60 }), (text) => {
        expect(typeof list.includes(text)).toBe('boolean')
      }),
    )
  })

  it('merges overlapping and adjacent blocks (an empty list matches nothing)', () => {
    const list = compileAddressList(['10.0.0.0/9', '10.128.0.0/9', '10.1.0.0/16', '10.0.0.0/8', ' 10.5.5.5 '], 'a')
    expect(
      ['9.255.255.255', '10.0.0.0', '10.127.255.255', '10.128.0.0', '10.255.255.255', '11.0.0.0'].map(list.includes),
    ).toEqual([false, true, true, true, true, false])
    expect(compileAddressList([], 'allowList').includes('10.0.0.1')).toBe(false)
  })

  const invalid: [unknown, string][] = [
    ['10.0.0.0/8', 'option "allowList" must be an array of IP addresses and CIDR blocks (got "10.0.0.0/8")'],
    [[7], 'option "allowList[0]" must be an IP address or CIDR block as a string (got 7)'],
    [['10.0.0.0/8', 'office'], 'option "allowList[1]" must be an IP address or CIDR block, such as 192.0.2.0/24'],
    [
      ['10.0.0.0/33'],
      'option "allowList[0]" must have a prefix length from 0 to 32 for an IPv4 block (got "10.0.0.0/33")',
    ],
    [['2001:db8::/129'], 'option "allowList[0]" must have a prefix length from 0 to 128 for an IPv6 block'],
    [['10.0.0.0/'], 'option "allowList[0]" must have a prefix length'],
    [['10.0.0.0/08'], 'option "allowList[0]" must have a prefix length'],
    [['10.0.0.0/8/8'], 'option "allowList[0]" must have a prefix length'],
    [['10.0.0.0/-1'], 'option "allowList[0]" must have a prefix length'],
    [
      ['10.0.0.1/8'],
      'option "allowList[0]" has bits set past its /8 prefix (got "10.0.0.1/8"): write the block\'s network, 10.0.0.0/8',
    ],
    [['192.168.1.0/16'], "write the block's network, 192.168.0.0/16, or a longer prefix if a narrower block was meant"],
    [['2001:db8::1/32'], "write the block's network, 2001:db8::/32"],
    [['1.2.3.4:80'], 'option "allowList[0]" must be an address or CIDR block without a port, brackets or zone index'],
    [['[2001:db8::1]'], 'without a port, brackets or zone index'],
    [['fe80::1%eth0'], 'without a port, brackets or zone index'],
    [['01.2.3.4'], 'option "allowList[0]" must be an IP address or CIDR block'],
    // '10.0.0.0 /8' was refused for a port, brackets or zone index: the message names the stray space instead.
    [
      ['10.0.0.0 /8'],
      'option "allowList[0]" has a space inside (got "10.0.0.0 /8"): write the address and its prefix without spaces, such as 10.0.0.0/8',
    ],
    [['10.0.0.0/ 8'], 'has a space inside (got "10.0.0.0/ 8")'],
    [['2001:db8:: /32'], 'such as 2001:db8::/32'],
  ]

  it.each(invalid)('refuses %p at compile time, naming the entry', (entries, message) => {
    let thrown: unknown
    try {
      compileAddressList(entries as string[], 'allowList')
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBeInstanceOf(InvalidOptionError)
    expect((thrown as Error).message).toContain(message)
  })
})

// A naive reference: every address a number in one 128-bit space, IPv4 address a as ::ffff:a; an entry matches
// an address when their first `prefix` bits agree.
const MAPPED = 0xffffn << 32n
const ALL_BITS = (1n << 128n) - 1n

interface Block {
  readonly network: bigint
  readonly prefix: number
  readonly text: string
}

const referenceIncludes = (blocks: readonly Block[], address: bigint) =>
  blocks.some((block) => address >> BigInt(128 - block.prefix) === block.network >> BigInt(128 - block.prefix))

const dotted = (value: bigint) => [24n, 16n, 8n, 0n].map((shift) => (value >> shift) & 0xffn).join('.')
const hexGroups = (value: bigint) =>
  Array.from({ length: 8 }, (_, i) => ((value >> BigInt(112 - i * 16)) & 0xffffn).toString(16)).join(':')
const isMapped = (value: bigint) => value >> 32n === 0xffffn
/** An address as a client would send it: IPv4 as a dotted quad (or its mapped spelling), IPv6 in full. */
const addressText = (value: bigint, mappedSpelling: boolean) =>
  isMapped(value) ? `${mappedSpelling ? '::ffff:' : ''}${dotted(value & 0xffffffffn)}` : hexGroups(value)

const hostMask = (prefix: number) => (1n << BigInt(128 - prefix)) - 1n

const ipv4Block = fc
  .tuple(fc.bigInt({ min: 0n, max: 0xffffffffn }), fc.integer({ min: 0, max: 32 }))
  .map(([value, prefix]): Block => {
    const network = (MAPPED | value) & ~hostMask(96 + prefix) & ALL_BITS
    return { network, prefix: 96 + prefix, text: `${dotted(network & 0xffffffffn)}/${prefix}` }
  })
const ipv6Block = fc
  .tuple(fc.bigInt({ min: 0n, max: ALL_BITS }), fc.integer({ min: 0, max: 128 }))
  .map(([value, prefix]): Block => {
    const network = value & ~hostMask(prefix) & ALL_BITS
    return { network, prefix, text: `${hexGroups(network)}/${prefix}` }
  })
const blocks = fc.array(fc.oneof(ipv4Block, ipv6Block), { maxLength: 12 })

/** Addresses worth asking about: anywhere, inside a block, or just outside one of its ends. */
const probes = (list: readonly Block[]) =>
  fc.array(
    fc.oneof(
      fc.bigInt({ min: 0n, max: ALL_BITS }),
      fc.bigInt({ min: 0n, max: 0xffffffffn }).map((value) => MAPPED | value),
      ...(list.length === 0
        ? []
        : [
            fc
              .tuple(fc.constantFrom(...list), fc.bigInt({ min: 0n, max: ALL_BITS }))
              .map(([block, host]) => block.network | (host & hostMask(block.prefix))),
            fc
              .tuple(fc.constantFrom(...list), fc.boolean())
              .map(([block, below]) => (below ? block.network - 1n : block.network + hostMask(block.prefix) + 1n))
              // Past either end of the whole space (a /0 block): the nearest end, which is in the block.
              .map((value) => (value < 0n ? 0n : value > ALL_BITS ? ALL_BITS : value)),
          ]),
    ),
    { minLength: 1, maxLength: 20 },
  )

describe('compileAddressList, property: agrees with a naive 128-bit reference', () => {
  it('an address is in the list exactly when it shares its first prefix bits with an entry', () => {
    fc.assert(
      fc.property(
        blocks.chain((list) => fc.tuple(fc.constant(list), probes(list), fc.boolean())),
        ([list, addresses, mappedSpelling]) => {
          const compiled = compileAddressList(
            list.map((block) => block.text),
            'allowList',
          )
          for (const address of addresses) {
            const text = addressText(address, mappedSpelling)
            expect([text, compiled.includes(text)]).toEqual([text, referenceIncludes(list, address)])
          }
        },
      ),
      { numRuns: 300 },
    )
  })
})
