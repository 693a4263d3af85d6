import { execFileSync } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

// The published package must load both ways, through its exports map, as a user's project would load it: built
// with the package's own tsup command into a throwaway node_modules, then required and imported by name.

const packageRoot = join(__dirname, '..')
const tsup = join(packageRoot, '..', '..', 'node_modules', '.bin', 'tsup')
let project: string

beforeAll(() => {
  project = mkdtempSync(join(tmpdir(), 'sluice-client-'))
  const installed = join(project, 'node_modules', '@sluice', 'client')
  mkdirSync(installed, { recursive: true })
  copyFileSync(join(packageRoot, 'package.json'), join(installed, 'package.json'))
  execFileSync(
    tsup,
    ['src/index.ts', '--format', 'esm,cjs', '--target', 'node20', '--out-dir', join(installed, 'dist')],
    {
      cwd: packageRoot,
      stdio: 'pipe',
    },
  )
}, 60_000)

afterAll(() => {
  rmSync(project, { recursive: true, force: true })
})

const probe = `
  const ok = typeof client.politeFetch === 'function' && typeof client.circuitBreaker === 'function'
  const info = client.parseRateLimitHeaders(new Headers({ RateLimit: '"user";r=42;t=18' }))
  console.log(JSON.stringify({ ok, remaining: info.remaining }))
`

function run(args: string[]): unknown {
  return JSON.parse(execFileSync(process.execPath, args, { cwd: project, encoding: 'utf8' }))
}

describe('@sluice/client as published', () => {
  it('loads with require()', () => {
    expect(run(['-e', `const client = require('@sluice/client')\n${probe}`])).toEqual({ ok: true, remaining: 42 })
  })

  it('loads with import', () => {
    const script = `import * as client from '@sluice/client'\n${probe}`
    expect(run(['--input-type=module', '-e', script])).toEqual({ ok: true, remaining: 42 })
  })
})
