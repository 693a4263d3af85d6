// The diagnostics registry: every warning under a stable code with a section in docs/diagnostics.md, once per process
// for each logger, silenced by SLUICE_SILENCE; and the kind of a client address returned, not left in a side channel.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { anchors } from '../../../../test/docs/markdown'
import { IPV4, IPV6, NOT_AN_ADDRESS } from '../../src/http/address'
import { addressKey, ipKey } from '../../src/http/ip'
import { clientKeys, type RequestFacts } from '../../src/http/keys'
import { DIAGNOSTICS, Diagnostic, type DiagnosticCode, warnEach, warnOnce } from '../../src/util/diagnostics'

const ROOT = join(__dirname, '../../../..')

function recorder() {
  const heard: [string, unknown][] = []
  return { heard, warn: (message: string, note?: unknown) => heard.push([message, note]), error() {} }
}

function withSilence<T>(value: string | undefined, run: () => T): T {
  const before = process.env['SLUICE_SILENCE']
  if (value === undefined) delete process.env['SLUICE_SILENCE']
  else process.env['SLUICE_SILENCE'] = value
  try {
    return run()
  } finally {
    if (before === undefined) delete process.env['SLUICE_SILENCE']
    else process.env['SLUICE_SILENCE'] = before
  }
}

describe('warnOnce', () => {
  it('logs a code once per logger, with the code and its docs anchor beside the message', () => {
    const first = recorder()
    const second = recorder()
    expect(warnOnce(first, 'SLUICE_NO_CLIENT_ADDRESS', 'sluice: one')).toBe(true)
    expect(warnOnce(first, 'SLUICE_NO_CLIENT_ADDRESS', 'sluice: again')).toBe(false)
    expect(warnOnce(second, 'SLUICE_NO_CLIENT_ADDRESS', 'sluice: to another logger')).toBe(true)
    expect(first.heard.map(([message]) => message)).toEqual(['sluice: one'])
    const note = first.heard[0]?.[1] as Diagnostic
    expect(note).toBeInstanceOf(Diagnostic)
    expect([note.code, note.docs]).toEqual(['SLUICE_NO_CLIENT_ADDRESS', 'docs/diagnostics.md#sluice_no_client_address'])
    expect(String(note)).toBe('SLUICE_NO_CLIENT_ADDRESS (see docs/diagnostics.md#sluice_no_client_address)')
    expect(second.heard).toHaveLength(1)
  })

  it('logs a code once for each subject (a key space)', () => {
    const logger = recorder()
    warnOnce(logger, 'SLUICE_SHARED_KEY_SPACE', 'sluice: a', 'space-a')
    warnOnce(logger, 'SLUICE_SHARED_KEY_SPACE', 'sluice: a again', 'space-a')
    warnOnce(logger, 'SLUICE_SHARED_KEY_SPACE', 'sluice: b', 'space-b')
    expect(logger.heard.map(([message]) => message)).toEqual(['sluice: a', 'sluice: b'])
  })

  it('is silenced, code by code, by SLUICE_SILENCE', () => {
    const logger = recorder()
    withSilence(' SLUICE_NOT_AN_ADDRESS ,SLUICE_REDIS_UNAVAILABLE', () => {
      expect(warnOnce(logger, 'SLUICE_NOT_AN_ADDRESS', 'sluice: silenced')).toBe(false)
      expect(warnEach(logger, 'SLUICE_REDIS_UNAVAILABLE', 'sluice: silenced too')).toBe(false)
      expect(warnOnce(logger, 'SLUICE_FORWARDED_UNTRUSTED', 'sluice: heard')).toBe(true)
    })
    // A silenced code was not heard, so it is logged once silence is lifted.
    expect(warnOnce(logger, 'SLUICE_NOT_AN_ADDRESS', 'sluice: now heard')).toBe(true)
    expect(logger.heard.map(([message]) => message)).toEqual(['sluice: heard', 'sluice: now heard'])
  })

  it('warnEach logs every time: for the warnings that come once per event, such as an outage', () => {
    const logger = recorder()
    warnEach(logger, 'SLUICE_REDIS_UNAVAILABLE', 'sluice: down')
    warnEach(logger, 'SLUICE_REDIS_UNAVAILABLE', 'sluice: down again')
    expect(logger.heard).toHaveLength(2)
  })
})

describe('the registry', () => {
  const doc = readFileSync(join(ROOT, 'docs/diagnostics.md'), 'utf8')
  const codes = Object.keys(DIAGNOSTICS) as DiagnosticCode[]

  it.each(codes)('%s has its section in docs/diagnostics.md, the code as its anchor', (code) => {
    expect(anchors(doc).has(code.toLowerCase())).toBe(true)
    expect(new Diagnostic(code).docs).toBe(`docs/diagnostics.md#${code.toLowerCase()}`)
  })

  it('documents no code the registry lacks', () => {
    const documented = [...doc.matchAll(/^## (SLUICE_\w+)$/gm)].map((match) => match[1])
    expect(documented.sort()).toEqual([...codes].sort())
  })

  it('is the only way a package logs a warning: every logger.warn( of the sources goes through it', () => {
    const sources = (dir: string): string[] =>
      readdirSync(dir).flatMap((name) => {
        const path = join(dir, name)
        return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : []
      })
    const direct = ['core', 'redis', 'express', 'koa', 'fastify', 'fetch']
      .flatMap((pkg) => sources(join(ROOT, 'packages', pkg, 'src')))
      // The express-rate-limit compatibility layer logs its own ERL codes, as express-rate-limit does.
      .filter((path) => !path.includes(join('express', 'src', 'compat')))
      .flatMap((path) =>
        readFileSync(path, 'utf8')
          .split('\n')
          .filter((line) => /\blogger\.warn\(/.test(line) && !/^\s*(\*|\/\/)/.test(line))
          .map((line) => `${path}: ${line.trim()}`),
      )
    const registry = join('util', 'diagnostics.ts')
    // The scan sees the registry's own two calls (warnOnce, warnEach), so it would see any other.
    expect(direct.filter((line) => line.includes(registry))).toHaveLength(2)
    expect(direct.filter((line) => !line.includes(registry))).toEqual([])
  })
})

describe('a permissive trust proxy (SLUICE_PERMISSIVE_TRUST_PROXY)', () => {
  const forwarded = (header: string, everyProxy: boolean): RequestFacts => ({
    ip: header.split(',')[0]?.trim(),
    method: 'GET',
    path: '/',
    headers: { 'x-forwarded-for': header },
    trustsProxy: () => true,
    trustsEveryProxy: () => everyProxy,
  })

  it('is warned of once, at the first request through several proxies that the framework all trusts', () => {
    const logger = recorder()
    const keyOf = clientKeys(64, logger)
    expect(keyOf(forwarded('203.0.113.9', true))).toBe('203.0.113.9')
    expect(logger.heard).toEqual([])
    expect(keyOf(forwarded('198.51.100.1, 203.0.113.9', true))).toBe('198.51.100.1')
    keyOf(forwarded('198.51.100.2, 203.0.113.9', true))
    expect(logger.heard).toHaveLength(1)
    expect(logger.heard[0]?.[0]).toMatch(/trusts every one, so it is keyed by the left-most X-Forwarded-For address/)
    expect(logger.heard[0]?.[1]).toMatchObject({ code: 'SLUICE_PERMISSIVE_TRUST_PROXY' })
  })

  it('is not warned of when the framework trusts only some proxies, or says nothing of it', () => {
    const logger = recorder()
    clientKeys(64, logger)(forwarded('198.51.100.1, 203.0.113.9', false))
    const { trustsEveryProxy: _, ...unsaid } = forwarded('198.51.100.1, 203.0.113.9', true)
    clientKeys(64, logger)(unsaid)
    expect(logger.heard).toEqual([])
  })
})

describe('addressKey: the kind of an address is returned with its key', () => {
  it.each([
    ['192.0.2.7', '192.0.2.7', IPV4],
    ['::ffff:192.0.2.7', '192.0.2.7', IPV4],
    ['192.0.2.7:5678', '192.0.2.7', IPV4],
    ['[2001:db8:1:2::9]:443', '2001:db8:1:2::/64', IPV6],
    ['not-an-address', 'not-an-address', NOT_AN_ADDRESS],
    ['  ', 'unknown', NOT_AN_ADDRESS],
    [undefined, 'unknown', NOT_AN_ADDRESS],
  ] as const)('%s', (address, key, kind) => {
    expect(addressKey(address)).toEqual({ key, kind })
    expect(ipKey(address)).toBe(key)
  })

  it('leaves nothing behind: an address read after another does not see its kind', () => {
    addressKey('2001:db8::1')
    expect(addressKey('nonsense').kind).toBe(NOT_AN_ADDRESS)
    addressKey('nonsense')
    expect(addressKey('192.0.2.1').kind).toBe(IPV4)
  })
})
