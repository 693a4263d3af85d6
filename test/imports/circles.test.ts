import { byFolder, circles, importedNames, importGraph, ties } from './import-graph'

// Each layer of a package depends one way: a file never imports, even for a type, a file that imports it back, and no
// folder does either (in the core: runtime < util < calendar < algorithms < rules < store < events < limiter, with
// protect on util and http on them all). The graph is read from the sources as they are (import-graph.ts), so a new
// circle fails here with the imports that close it.
describe('the import graph of packages/*/src', () => {
  const graph = importGraph()

  it('has no circle, type-only imports included', () => {
    expect(circles(graph).map((circle) => ties(graph, circle))).toEqual([])
  })

  it('has no circle between the folders of a package either', () => {
    const folders = byFolder(graph)
    expect(circles(folders).map((circle) => ties(folders, circle))).toEqual([])
  })

  it('is the whole graph: every package is read, and its names resolve to their sources', () => {
    for (const name of ['core', 'redis', 'express', 'koa', 'fastify', 'fetch', 'client']) {
      expect(graph.get(`packages/${name}/src/index.ts`)?.length).toBeGreaterThan(0)
    }
    const intoStoreEntry = [...graph.values()].filter((targets) => targets.includes('packages/core/src/store-index.ts'))
    expect(intoStoreEntry.length).toBeGreaterThan(0)
  })
})

describe('reading the imports', () => {
  it('counts every form of import: values, types, re-exports, import() and import types', () => {
    const text = [
      "import { a } from './a'",
      "import type { B } from './b'",
      "import { type C } from './c'",
      "export { d } from './d'",
      "export type { E } from './e'",
      "export * from './f'",
      "import g = require('./g')",
      "type H = import('./h').H",
      "const i = () => import('./i')",
      "import './j'",
    ].join('\n')
    expect(importedNames('x.ts', text)).toEqual(['./a', './b', './c', './d', './e', './f', './g', './h', './i', './j'])
  })

  it('finds every circle, of two files, of more, and a file that imports itself, and no file outside them', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['a', 'c']],
      ['c', ['d']],
      ['d', ['e']],
      ['e', ['c', 'f']],
      ['f', []],
      ['g', ['g', 'f']],
    ])
    expect(circles(graph)).toEqual([['c', 'd', 'e'], ['a', 'b'], ['g']])
    expect(ties(graph, ['c', 'd', 'e'])).toEqual(['c -> d', 'd -> e', 'e -> c'])
  })

  it('sees two folders that import each other through different files', () => {
    const graph = new Map([
      ['packages/p/src/a/one.ts', ['packages/p/src/b/one.ts', 'packages/p/src/a/two.ts']],
      ['packages/p/src/a/two.ts', []],
      ['packages/p/src/b/one.ts', []],
      ['packages/p/src/b/two.ts', ['packages/p/src/a/two.ts', 'packages/p/src/index.ts']],
      ['packages/p/src/index.ts', ['packages/p/src/a/one.ts']],
    ])
    expect(circles(graph)).toEqual([])
    expect(circles(byFolder(graph))).toEqual([['packages/p/src/a/', 'packages/p/src/b/', 'packages/p/src/index.ts']])
  })
})
