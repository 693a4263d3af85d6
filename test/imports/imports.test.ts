import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'

// Each consumer loads the BUILT adapters by name (through the workspace links in node_modules and each package's
// exports map), as an app that installed them would; `npm test` builds them first.
const root = join(__dirname, '..', '..')
const run = promisify(execFile)

beforeAll(() => {
  for (const name of ['core', 'express', 'koa', 'fastify']) {
    for (const file of ['index.js', 'index.mjs']) {
      if (!existsSync(join(root, 'packages', name, 'dist', file))) {
        throw new Error(`packages/${name}/dist/${file} is missing: run \`npm run build\` first`)
      }
    }
  }
})

const expected = {
  fastifyDefaultIsPlugin: true,
  storeEntryShared: true,
  protectExports: true,
  express: [200, 429],
  expressCompat: [200, 429],
  compatDefault: true,
  koa: [200, 429],
  fastify: [200, 429],
}

it('works with CommonJS require()', async () => {
  const { stdout } = await run(process.execPath, [join(__dirname, 'cjs', 'consumer.js')], {
    cwd: join(__dirname, 'cjs'),
  })
  expect(JSON.parse(stdout)).toEqual(expected)
})

it('works with ESM import', async () => {
  const { stdout } = await run(process.execPath, [join(__dirname, 'esm', 'consumer.js')], {
    cwd: join(__dirname, 'esm'),
  })
  expect(JSON.parse(stdout)).toEqual(expected)
})
