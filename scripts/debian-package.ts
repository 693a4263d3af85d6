// Test infrastructure: installs a Debian package the tests need, when it is missing and the tests run as root
// (as CI does); otherwise fails saying how to install it.
import { spawnSync } from 'node:child_process'
import { mkdirSync, rmdirSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export interface DebianPackage {
  /** The package's name, for apt-get. */
  readonly name: string
  /** Whether what the tests need from it is there. */
  readonly present: () => boolean
  /** How to install it by hand, for the error of a run that cannot. */
  readonly hint: string
}

/**
 * Makes sure the package is there: when not and this process is root, installs it with apt-get (one install at a
 * time across jest workers, by a lock directory); otherwise throws the package's hint.
 *
 * @example
 * ensureDebianPackage({ name: 'chromium', present: () => existsSync('/usr/bin/chromium'), hint: 'apt-get install chromium' })
 */
export function ensureDebianPackage(pkg: DebianPackage): void {
  if (pkg.present()) return
  const root = typeof process.getuid === 'function' && process.getuid() === 0
  if (!root || spawnSync('apt-get', ['--version']).error) {
    throw new Error(`${pkg.name} is not installed. ${pkg.hint}, and run the tests again.`)
  }
  const lock = join(tmpdir(), `sluice-${pkg.name}-install.lock`)
  const deadline = Date.now() + 600_000
  for (;;) {
    try {
      mkdirSync(lock)
      break
    } catch {
      if (pkg.present()) return
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${lock} (remove it if no install is running)`)
      // A lock older than 15 minutes belongs to a process that died.
      const since = statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now()
      if (Date.now() - since > 900_000) rmdirSync(lock)
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 250)
    }
  }
  try {
    if (pkg.present()) return
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
    for (const args of [['update'], ['install', '-y', '--no-install-recommends', pkg.name]]) {
      const result = spawnSync('apt-get', ['-o', 'DPkg::Lock::Timeout=300', ...args], { env, encoding: 'utf8' })
      if (result.status !== 0) throw new Error(`apt-get ${args.join(' ')} failed:\n${result.stderr || result.stdout}`)
    }
    if (!pkg.present()) throw new Error(`apt-get installed ${pkg.name}, but it is still not there`)
  } finally {
    rmdirSync(lock)
  }
}
