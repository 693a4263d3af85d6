// `npm run release:check`: what must hold before `npm publish` (RELEASING.md). Builds, runs publint on every
// package, packs each one as npm would publish it and checks the tarball (LICENSE, CHANGELOG, caret ranges between
// Sluice packages, source maps free of build paths), installs the tarballs into a scratch app in a temporary
// directory, compiles TypeScript against the packed types in strict mode, and runs the app in CommonJS and ESM:
// a request through Express, Koa and Fastify, each error's name and code, errors recognised across the two formats.
// `--keep` leaves the scratch directory in place.
import { compileTypes, installApp, packAll, problemsOf, root, runConsumers, scratchDirectory, sh } from './packed.mjs'

const scratch = await scratchDirectory()
let failed = true
try {
  await sh('npm', ['run', 'build'], { cwd: root })
  await sh('npx', ['turbo', 'run', 'lint', '--output-logs=errors-only'], { cwd: root })
  const tarballs = await packAll(`${scratch.path}/tarballs`)
  const problems = (await Promise.all(Object.values(tarballs).map((t) => problemsOf(t, scratch.path)))).flat()
  if (problems.length > 0) throw new Error(`the tarballs are not publishable:\n  ${problems.join('\n  ')}`)
  const app = await installApp(scratch.path, tarballs)
  await compileTypes(app)
  const failures = await runConsumers(app)
  if (failures.length > 0)
    throw new Error(`the packed app failed on Node ${process.version}:\n  ${failures.join('\n  ')}`)
  console.log(
    `release:check: ${Object.keys(tarballs).length} tarballs packed, installed, compiled and run on Node ${process.version}`,
  )
  failed = false
} catch (error) {
  console.error(`release:check: ${error.message}`)
  process.exitCode = 1
} finally {
  if (process.argv.includes('--keep') || failed) console.log(`release:check: the scratch directory is ${scratch.path}`)
  else await scratch.remove()
}
