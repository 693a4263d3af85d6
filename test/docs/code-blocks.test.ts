// Every TypeScript block of docs/ is a region of a file that `npm run typecheck` compiles (and, for the migration
// examples, that a test runs), quoted word for word: a block follows a marker `<!-- code: <path>[#<region>] -->`,
// and a region is the lines between `// #region <name>` and `// #endregion <name>`, without their common indent.
// The root README's blocks that carry such a marker (its quick starts, which readme.test.ts runs) are held alike.
import { fences, markdownFiles, quoted, read } from './markdown'

const docs = markdownFiles().filter((file) => file.startsWith('docs/'))

const blocks = docs
  .flatMap((file) =>
    fences(read(file))
      .filter((fence) => fence.lang === 'ts' || fence.lang === 'typescript')
      .map((fence) => [`${file}:${fence.line}`, fence] as const),
  )
  .concat(
    fences(read('README.md'))
      .filter((fence) => fence.lineBefore.startsWith('<!-- code: '))
      .map((fence) => [`README.md:${fence.line}`, fence] as const),
  )

test('docs/ and the README have TypeScript blocks to check', () => {
  expect(blocks.length).toBeGreaterThan(5)
})

test.each(blocks)('%s quotes a compiled file exactly', (_where, fence) => {
  const marker = /^<!-- code: (\S+) -->$/.exec(fence.lineBefore)
  expect(marker?.[0] ?? `a <!-- code: path#region --> marker before the block (found "${fence.lineBefore}")`).toBe(
    fence.lineBefore,
  )
  expect(fence.text).toBe(quoted(marker?.[1] as string))
})
