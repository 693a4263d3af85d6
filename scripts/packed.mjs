// What `npm run release:check` and `npm run test:node-versions` share: pack every package as npm would publish it,
// check the tarballs, install them into a scratch app outside the repository, and run that app. The app is the
// consumers of test/imports (CommonJS and ESM, each also loading the other format) and a strict TypeScript compile
// of scripts/scratch-app against the packed types.
import { execFile } from 'node:child_process'
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { isAbsolute, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { isDeepStrictEqual, promisify } from 'node:util'

const run = promisify(execFile)
export const root = fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '')
export const PACKAGES = ['core', 'redis', 'client', 'express', 'koa', 'fastify', 'fetch']
/** What every tarball must hold besides its dist/. */
const REQUIRED_FILES = ['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md']
/** The frameworks and types the scratch app installs, at the ranges the repository tests with. */
const APP_DEPENDENCIES = ['express', 'koa', 'fastify']
const APP_DEV_DEPENDENCIES = ['typescript', '@types/node', '@types/express', '@types/koa']

/** Runs a command, echoing it; its output is returned, and shown when it fails. */
export async function sh(command, args, options = {}) {
  console.log(`$ ${[command, ...args].join(' ')}`)
  try {
    return (await run(command, args, { maxBuffer: 64 * 1024 * 1024, ...options })).stdout
  } catch (error) {
    process.stdout.write(error.stdout ?? '')
    process.stderr.write(error.stderr ?? '')
    throw new Error(`failed: ${[command, ...args].join(' ')}`)
  }
}

/** A fresh directory under the system's temporary directory; `remove()` deletes it. */
export async function scratchDirectory() {
  const path = await mkdtemp(join(tmpdir(), 'sluice-release-'))
  return { path, remove: () => rm(path, { recursive: true, force: true }) }
}

/** `npm pack` for every package, into `destination`; answers the tarballs' paths by package folder. */
export async function packAll(destination) {
  await mkdir(destination, { recursive: true })
  const tarballs = {}
  for (const name of PACKAGES) {
    const out = await sh('npm', ['pack', '--json', '--pack-destination', destination], {
      cwd: join(root, 'packages', name),
    })
    tarballs[name] = join(destination, JSON.parse(out)[0].filename)
  }
  return tarballs
}

const license = readFile(join(root, 'LICENSE'), 'utf8')

/**
 * What is wrong with one tarball: a required file missing, a changelog without the version, a dependency on another Sluice package that is not a
 * caret range, a source map whose paths are absolute, or any file that names the directory it was built in.
 */
export async function problemsOf(tarball, workDirectory) {
  const into = join(workDirectory, `unpacked-${tarball.split('/').pop()}`)
  await mkdir(into, { recursive: true })
  await sh('tar', ['-xzf', tarball, '-C', into])
  const base = join(into, 'package')
  const problems = []
  const files = await readdir(base, { recursive: true })
  for (const file of REQUIRED_FILES) if (!files.includes(file)) problems.push(`${file} is missing`)
  const manifest = JSON.parse(await readFile(join(base, 'package.json'), 'utf8'))
  if (files.includes('LICENSE') && (await readFile(join(base, 'LICENSE'), 'utf8')) !== (await license)) {
    problems.push('LICENSE differs from the LICENSE at the root of the repository')
  }
  if (files.includes('CHANGELOG.md')) {
    const changelog = await readFile(join(base, 'CHANGELOG.md'), 'utf8')
    if (!changelog.split('\n').includes(`## ${manifest.version}`)) {
      problems.push(`CHANGELOG.md has no heading "## ${manifest.version}" for the version being released`)
    }
  }
  for (const [dependency, range] of Object.entries(manifest.dependencies ?? {})) {
    if (dependency.startsWith('@sluice/') && !/^\^\d+\.\d+\.\d+$/.test(range)) {
      problems.push(`dependency ${dependency} is "${range}", not a caret range`)
    }
  }
  for (const file of files.filter((f) => /\.(m?js|cjs|map|d\.m?ts)$/.test(f))) {
    const text = await readFile(join(base, file), 'utf8')
    if (text.includes(root)) problems.push(`${file} names the build directory ${root}`)
    if (!file.endsWith('.map')) continue
    const map = JSON.parse(text)
    const paths = [map.file, map.sourceRoot, ...(map.sources ?? [])].filter((p) => typeof p === 'string' && p !== '')
    for (const path of paths) {
      if (isAbsolute(path) || /^[A-Za-z]:[\\/]|^file:/.test(path)) problems.push(`${file}: absolute path ${path}`)
    }
    if (map.sources?.length > 0 && map.sourcesContent?.length !== map.sources.length) {
      problems.push(`${file}: sourcesContent does not hold every source`)
    }
  }
  return problems.map((problem) => `${manifest.name}: ${problem}`)
}

/**
 * Installs the tarballs (and the frameworks the consumers use) into `<directory>/app`, with the consumers of
 * test/imports and the TypeScript files of scripts/scratch-app beside them. Answers the app's directory.
 */
export async function installApp(directory, tarballs) {
  const app = join(directory, 'app')
  await mkdir(app, { recursive: true })
  const rootManifest = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'))
  const pick = (names) => Object.fromEntries(names.map((name) => [name, rootManifest.devDependencies[name]]))
  const manifest = {
    name: 'sluice-scratch-app',
    private: true,
    description: 'Installs the packed Sluice tarballs as a user would, and runs them.',
    dependencies: {
      ...Object.fromEntries(PACKAGES.map((name) => [`@sluice/${name}`, `file:${tarballs[name]}`])),
      ...pick(APP_DEPENDENCIES),
    },
    devDependencies: pick(APP_DEV_DEPENDENCIES),
  }
  await writeFile(join(app, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`)
  for (const entry of ['checks.cjs', 'expected.json', 'cjs', 'esm']) {
    await cp(join(root, 'test', 'imports', entry), join(app, entry), { recursive: true })
  }
  await cp(join(root, 'scripts', 'scratch-app'), join(app, 'types'), { recursive: true })
  await sh('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], { cwd: app })
  return app
}

/** The strict TypeScript compile of the app's types/ against the packed .d.ts and .d.mts files. */
export async function compileTypes(app) {
  await sh(process.execPath, [join(app, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(app, 'types')])
}

/**
 * Runs a set of consumers (the packed app's, or the repository's test/imports) on the Node binary `node`, and
 * answers what differs from test/imports/expected.json (nothing: an empty list).
 */
export async function runConsumers(directory, node = process.execPath) {
  const expected = JSON.parse(await readFile(join(root, 'test', 'imports', 'expected.json'), 'utf8'))
  const failures = []
  for (const format of ['cjs', 'esm']) {
    const cwd = join(directory, format)
    let results
    try {
      results = JSON.parse(await sh(node, [join(cwd, 'consumer.js')], { cwd }))
    } catch (error) {
      failures.push(`${format}: ${error.message}`)
      continue
    }
    for (const key of new Set([...Object.keys(expected), ...Object.keys(results)])) {
      if (!isDeepStrictEqual(results[key], expected[key])) {
        failures.push(`${format}: ${key} is ${JSON.stringify(results[key])}, expected ${JSON.stringify(expected[key])}`)
      }
    }
  }
  return failures
}
