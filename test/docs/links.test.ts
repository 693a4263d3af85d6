// No file of the project links outside the repository, and every link inside it resolves: to a file or folder of the
// repository, and to a heading of that file when it names one. A reader of a clone, offline, can follow every link.
import { existsSync, statSync } from 'node:fs'
import { dirname, join, normalize, relative, sep } from 'node:path'
import { anchors, linkTargets, markdownFiles, ROOT, read } from './markdown'

const files = markdownFiles()

/** Why a link of `file` does not resolve, or undefined when it does. */
function broken(file: string, target: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) return 'leaves the repository'
  const [path = '', anchor] = target.split('#', 2)
  const resolved = path === '' ? file : normalize(join(dirname(file), decodeURIComponent(path)))
  if (resolved === '..' || resolved.startsWith(`..${sep}`) || relative(ROOT, join(ROOT, resolved)).startsWith('..')) {
    return 'leaves the repository'
  }
  if (!existsSync(join(ROOT, resolved))) return `${resolved} does not exist`
  if (anchor === undefined) return undefined
  if (!resolved.endsWith('.md') || statSync(join(ROOT, resolved)).isDirectory())
    return `#${anchor} on a file that is not Markdown`
  return anchors(read(resolved)).has(anchor) ? undefined : `${resolved} has no heading #${anchor}`
}

test('the project has its Markdown where the docs index says', () => {
  expect(files).toEqual(expect.arrayContaining(['README.md', 'docs/algorithms.md', 'docs/http.md', 'bench/RESULTS.md']))
})

test.each(files)('%s: every link stays in the repository and resolves', (file) => {
  const problems = linkTargets(read(file))
    .map((target) => [target, broken(file, target)] as const)
    .filter(([, problem]) => problem !== undefined)
    .map(([target, problem]) => `${target}: ${problem}`)
  expect(problems).toEqual([])
})

test('the checker sees what it must refuse', () => {
  expect(broken('README.md', 'https://example.com/')).toBe('leaves the repository')
  expect(broken('README.md', '../shared/DESIGN.md')).toBe('leaves the repository')
  expect(broken('docs/http.md', '../../elsewhere.md')).toBe('leaves the repository')
  expect(broken('README.md', 'docs/nothing-here.md')).toBe('docs/nothing-here.md does not exist')
  expect(broken('README.md', 'docs/http.md#no-such-heading')).toBe('docs/http.md has no heading #no-such-heading')
  expect(broken('docs/http.md', '#retry-after')).toBeUndefined()
  expect(linkTargets('[a](x.md) ![b](y.svg "t") `[c](z.md)` <https://e.org> <img src="v.png">\n[d]: w.md')).toEqual([
    'x.md',
    'y.svg',
    'w.md',
    'https://e.org',
    'v.png',
  ])
})
