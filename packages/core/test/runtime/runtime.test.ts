// The core outside Node: its own SHA-256 gives Node's digests, and a bundle of the core for a browser loads and
// decides in a context that has only what a browser or a Worker has (no process, no require, no node: modules).
import { createHash } from 'node:crypto'
import { join } from 'node:path'
import { runInNewContext } from 'node:vm'
import { build } from 'esbuild'
import fc from 'fast-check'
import { sha256Hex, utf16leBytes } from '../../src/runtime/sha256'
import { longKeyDigest } from '../../src/store/long-keys'
import { keyHash } from '../../src/util/key-hash'

const nodeUtf8 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex')
const nodeUtf16 = (text: string) => createHash('sha256').update(text, 'utf16le').digest('hex')

describe('the core SHA-256, for runtimes without node:crypto', () => {
  it('gives the FIPS 180-4 digests of the standard messages', () => {
    expect(sha256Hex(new TextEncoder().encode(''))).toBe(
      'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    )
    expect(sha256Hex(new TextEncoder().encode('abc'))).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    )
    expect(sha256Hex(new TextEncoder().encode('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq'))).toBe(
      '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
    )
  })

  it("agrees with Node's digest for every length around the block boundaries", () => {
    for (let length = 0; length <= 200; length++) {
      const text = 'k'.repeat(length)
      expect(sha256Hex(new TextEncoder().encode(text))).toBe(nodeUtf8(text))
    }
  })

  it("agrees with Node's UTF-8 and UTF-16 digests for any string, lone surrogates included", () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (text) => {
        expect(sha256Hex(new TextEncoder().encode(text))).toBe(nodeUtf8(text))
        expect(sha256Hex(utf16leBytes(text))).toBe(nodeUtf16(text))
      }),
      { numRuns: 300 },
    )
  })
})

describe('the core in a runtime without Node', () => {
  let bundle: string

  beforeAll(async () => {
    const result = await build({
      entryPoints: [join(__dirname, '../../src/index.ts')],
      bundle: true,
      write: false,
      format: 'iife',
      globalName: 'Sluice',
      platform: 'browser',
      target: 'es2022',
      logLevel: 'silent',
    })
    bundle = (result.outputFiles[0] as { text: string }).text
  })

  /** A fresh context with what a browser has (and Node's timers and Web Crypto standing in for its own). */
  function browserLike(): Record<string, unknown> {
    return {
      TextEncoder,
      TextDecoder,
      crypto: globalThis.crypto,
      performance,
      setTimeout,
      clearTimeout,
      setInterval,
      clearInterval,
      queueMicrotask,
      console,
      URL,
    }
  }

  it('bundles for the browser with no node: module left in it', () => {
    // The names stay, as arguments of process.getBuiltinModule; no import or require of them does.
    expect(bundle).toContain("'node:crypto'".replace(/'/g, '"'))
    expect(bundle).not.toMatch(/\b(?:import|from|require)\s*\(?\s*["']node:/)
    expect(bundle).not.toMatch(/\brequire\(/)
  })

  it('loads, decides and hashes keys as on Node, with no process object', async () => {
    const context = browserLike()
    runInNewContext(`${bundle};globalThis.Sluice = Sluice`, context)
    expect(context['process']).toBeUndefined()
    const core = context['Sluice'] as typeof import('../../src/index')
    let now = 1_000_000
    const limiter = core.createLimiter({
      algorithm: 'fixed-window',
      limit: 2,
      window: '1s',
      store: new core.MemoryStore({ clock: () => now }),
    })
    const allowed: boolean[] = []
    for (let i = 0; i < 3; i++) allowed.push((await limiter.consume('user:42')).allowed)
    now += 1000
    allowed.push((await limiter.consume('user:42')).allowed)
    expect(allowed).toEqual([true, true, false, true])
    expect(core.keyHash('user:42')).toBe(keyHash('user:42'))
  })

  it('keeps a long key by the same digest as on Node, so a key counts in the same place in every runtime', async () => {
    const result = await build({
      stdin: {
        contents: "export { longKeyDigest } from './long-keys'",
        resolveDir: join(__dirname, '../../src/store'),
        loader: 'ts',
      },
      bundle: true,
      write: false,
      format: 'iife',
      globalName: 'LongKeys',
      platform: 'browser',
      logLevel: 'silent',
    })
    const context = browserLike()
    runInNewContext(`${(result.outputFiles[0] as { text: string }).text};globalThis.LongKeys = LongKeys`, context)
    const { longKeyDigest: digestElsewhere } = context['LongKeys'] as typeof import('../../src/store/long-keys')
    for (const key of ['x'.repeat(300), `${'\u{1F600}'.repeat(200)}\uD800`]) {
      expect(digestElsewhere(key)).toBe(longKeyDigest(key))
    }
  })
})
