import { execFile } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'

// Each consumer loads the BUILT packages by name (through the workspace links in node_modules and each package's
// exports map), as an app that installed them would, and also loads them in the other module format, as a
// dependency of that app might; `npm test` builds them first. `npm run test:node-versions` runs the same consumers on
// Node 20, 22 and 24, and `npm run release:check` runs them against the packed tarballs.
const root = join(__dirname, '..', '..')
const run = promisify(execFile)
const expected = JSON.parse(readFileSync(join(__dirname, 'expected.json'), 'utf8'))

beforeAll(() => {
  for (const name of ['core', 'redis', 'client', 'express', 'koa', 'fastify']) {
    for (const file of ['index.js', 'index.mjs']) {
      if (!existsSync(join(root, 'packages', name, 'dist', file))) {
        throw new Error(`packages/${name}/dist/${file} is missing: run \`npm run build\` first`)
      }
    }
  }
})

describe.each([
  ['CommonJS require()', 'cjs'],
  ['ESM import', 'esm'],
])('loaded with %s', (_format, folder) => {
  let results: typeof expected
  beforeAll(async () => {
    const { stdout } = await run(process.execPath, [join(__dirname, folder, 'consumer.js')], {
      cwd: join(__dirname, folder),
    })
    results = JSON.parse(stdout)
  })

  it('limits one real server per framework: 200, then 429', () => {
    expect(results.limited).toEqual(expected.limited)
    expect(results.fastifyDefaultIsPlugin).toBe(true)
    expect(results.storeEntryShared).toBe(true)
    expect(results.protectExports).toBe(true)
  })

  it("answers 503, not 200, when the store throws the other format's StoreUnavailableError under onError 'open'", () => {
    expect(results.failClosedAcrossFormats).toEqual({ express: [503], koa: [503], fastify: [503] })
  })

  it("recognises every error made by the other format's class as an instance of its own, and of no other", () => {
    expect(results.recognisedAcrossFormats).toEqual(expected.recognisedAcrossFormats)
  })

  it('keeps the name of every exported class (the CommonJS build named them _class, _class7, ...)', () => {
    expect(results.classNames).toEqual(expected.classNames)
    expect(results.errorNames).toEqual(expected.errorNames)
    expect(results.inspected).toBe('InvalidOptionError: sluice: option "limit" must be a positive whole number (got 0)')
  })

  it('gives every error its stable code', () => {
    expect(results.errorCodes).toEqual(expected.errorCodes)
  })

  it('computes the key hash of the events as on every runtime', () => {
    expect(results.keyHash).toBe(expected.keyHash)
  })

  it('prints everything expected.json holds, and nothing else', () => {
    expect(results).toEqual(expected)
  })
})
