// A package's README is published without the repository around it: package.json "files" sends `dist` and the
// README to npm, and the README is what npm's page and node_modules show. A relative link that leaves the package's
// directory (`../../docs/events.md`, `../core/README.md#protecting-the-service`) leads nowhere there. So a package
// README links only to files of its own package and to its own headings, and names a repository doc or another
// package's README in plain text. links.test.ts checks that every link resolves in a clone; this suite checks that
// the links of a package README still point inside the package once it is published alone.
import { existsSync, readdirSync } from 'node:fs'
import { join, posix } from 'node:path'
import { links, ROOT, read } from './markdown'

const readmes = readdirSync(join(ROOT, 'packages'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && existsSync(join(ROOT, 'packages', entry.name, 'README.md')))
  .map((entry) => `packages/${entry.name}/README.md`)
  .sort()

/**
 * Whether a link of a README at the root of its package leads outside the package. URLs (https:, mailto:, ...) are
 * not paths: links.test.ts refuses them. A path from the root (`/docs/http.md`) is the repository's root on GitHub
 * and nothing on npm.
 */
function leavesThePackage(target: string): boolean {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) return false
  const path = target.split(/[?#]/, 1)[0] ?? ''
  if (path === '') return false
  if (path.startsWith('/')) return true
  const resolved = posix.normalize(decodeURIComponent(path))
  return resolved === '..' || resolved.startsWith('../')
}

test('every package has its README here', () => {
  expect(readmes).toEqual(
    ['client', 'core', 'express', 'fastify', 'fetch', 'koa', 'redis'].map((name) => `packages/${name}/README.md`),
  )
})

test.each(readmes)('%s: every link stays in its package', (file) => {
  const outside = links(read(file))
    .filter((link) => leavesThePackage(link.target))
    .map((link) => `${file}:${link.line}: ${link.target}`)
  expect(outside).toEqual([])
})

test('the checker sees what it must refuse', () => {
  expect(leavesThePackage('../../docs/algorithms.md')).toBe(true)
  expect(leavesThePackage('../../docs/events.md#keys-hashed-unless-you-ask')).toBe(true)
  expect(leavesThePackage('../core/README.md#protecting-the-service')).toBe(true)
  expect(leavesThePackage('./../core/README.md')).toBe(true)
  expect(leavesThePackage('dist/../../core/README.md')).toBe(true)
  expect(leavesThePackage('%2E%2E/core/README.md')).toBe(true)
  expect(leavesThePackage('..')).toBe(true)
  expect(leavesThePackage('/docs/http.md')).toBe(true)
  expect(leavesThePackage('#protecting-the-service')).toBe(false)
  expect(leavesThePackage('./README.md#install')).toBe(false)
  expect(leavesThePackage('dist/index.d.ts')).toBe(false)
  expect(leavesThePackage('https://example.com/docs/http.md')).toBe(false)
  expect(leavesThePackage('mailto:someone@example.com')).toBe(false)
  const markdown = [
    'In [the guide](../../docs/http.md), see',
    '![a figure](../../docs/burst.svg "Burst") and [a',
    'heading](#install).',
    '```md',
    '[not a link](../../docs/events.md)',
    '```',
    'Nor `[this](../x.md)`; but <img src="../../docs/overload.svg"> is.',
    '[events]: ../../docs/events.md#sluicedecision',
  ].join('\n')
  expect(links(markdown)).toEqual([
    { target: '../../docs/http.md', line: 1 },
    { target: '../../docs/burst.svg', line: 2 },
    { target: '#install', line: 3 },
    { target: '../../docs/events.md#sluicedecision', line: 8 },
    { target: '../../docs/overload.svg', line: 7 },
  ])
})
