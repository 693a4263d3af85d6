// Every TypeScript block of docs/ is a region of a file that `npm run typecheck` compiles (and, for the migration
// examples, that a test runs), quoted word for word: a block follows a marker `<!-- code: <path>[#<region>] -->`,
// and a region is the lines between `// #region <name>` and `// #endregion <name>`, without their common indent.
import { fences, markdownFiles, read } from './markdown'

const docs = markdownFiles().filter((file) => file.startsWith('docs/'))

/** The text a marker names: a whole file, or one region of it, dedented. */
function quoted(marker: string): string {
  const [path = '', region] = marker.split('#', 2)
  const text = read(path)
  if (region === undefined) return text.replace(/\n$/, '')
  const lines = text.split('\n')
  const start = lines.findIndex((line) => line.trim() === `// #region ${region}`)
  const end = lines.findIndex((line) => line.trim() === `// #endregion ${region}`)
  if (start === -1 || end < start) throw new Error(`${path} has no region "${region}"`)
  const body = lines.slice(start + 1, end)
  const indent = Math.min(...body.filter((line) => line.trim() !== '').map((line) => /^ */.exec(line)?.[0].length ?? 0))
  return body.map((line) => line.slice(indent)).join('\n')
}

const blocks = docs.flatMap((file) =>
  fences(read(file))
    .filter((fence) => fence.lang === 'ts' || fence.lang === 'typescript')
    .map((fence) => [`${file}:${fence.line}`, fence] as const),
)

test('docs/ has TypeScript blocks to check', () => {
  expect(blocks.length).toBeGreaterThan(5)
})

test.each(blocks)('%s quotes a compiled file exactly', (_where, fence) => {
  const marker = /^<!-- code: (\S+) -->$/.exec(fence.lineBefore)
  expect(marker?.[0] ?? `a <!-- code: path#region --> marker before the block (found "${fence.lineBefore}")`).toBe(
    fence.lineBefore,
  )
  expect(fence.text).toBe(quoted(marker?.[1] as string))
})
