// The import graph of the packages' sources, read with the TypeScript compiler: every `import`, `import type`,
// `export ... from`, `import()` and `import('...').Type` of every file under packages/*/src, resolved as tsc resolves
// it (the root tsconfig's `paths` send `@sluice/core/store` and the like to their source), so an import that only
// brings a type counts as much as one that brings a value. `npx tsx test/imports/import-graph.ts` prints the circles.
import { existsSync, readdirSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import ts from 'typescript'

const root = join(__dirname, '..', '..')

/** Every TypeScript source file of every package, by absolute path (declaration files and tests are not sources). */
export function sourceFiles(): string[] {
  const packages = join(root, 'packages')
  return readdirSync(packages).flatMap((name) =>
    readdirSync(join(packages, name, 'src'), { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
      .map((file) => join(packages, name, 'src', file)),
  )
}

/** The module names a file imports or re-exports, type-only ones included. */
export function importedNames(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS)
  const names: string[] = []
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
      if (ts.isStringLiteral(node.moduleSpecifier)) names.push(node.moduleSpecifier.text)
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      const expression = node.moduleReference.expression
      if (ts.isStringLiteral(expression)) names.push(expression.text)
    } else if (ts.isImportTypeNode(node)) {
      const argument = node.argument
      if (ts.isLiteralTypeNode(argument) && ts.isStringLiteral(argument.literal)) names.push(argument.literal.text)
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [first] = node.arguments
      if (first !== undefined && ts.isStringLiteralLike(first)) names.push(first.text)
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return names
}

/** The graph: for each source file (relative to the repository), the source files it imports, resolved by tsc. */
export function importGraph(): Map<string, string[]> {
  const config = ts.getParsedCommandLineOfConfigFile(
    join(root, 'tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'))
      },
    },
  )
  if (config === undefined) throw new Error('tsconfig.json could not be read')
  const files = sourceFiles()
  const known = new Set(files)
  const graph = new Map<string, string[]>()
  for (const file of files) {
    const text = ts.sys.readFile(file)
    if (text === undefined) throw new Error(`${file} could not be read`)
    const targets = new Set<string>()
    for (const name of importedNames(file, text)) {
      const resolved = ts.resolveModuleName(name, file, config.options, ts.sys).resolvedModule?.resolvedFileName
      // A relative name tsc cannot resolve is a typo, unless it is a file that is no module (a .lua script): a leaf.
      if (name.startsWith('.') && resolved === undefined && !existsSync(join(dirname(file), name))) {
        throw new Error(`${file}: "${name}" does not resolve`)
      }
      if (resolved !== undefined && known.has(resolved)) targets.add(relative(root, resolved))
    }
    graph.set(relative(root, file), [...targets].sort())
  }
  return graph
}

/**
 * The circles of a graph: its strongly connected components of more than one file, or of one file that imports
 * itself (Tarjan's algorithm), each sorted, largest first.
 */
export function circles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const found: string[][] = []
  const connect = (file: string): void => {
    index.set(file, next)
    low.set(file, next)
    next++
    stack.push(file)
    onStack.add(file)
    for (const target of graph.get(file) ?? []) {
      if (!index.has(target)) {
        connect(target)
        low.set(file, Math.min(low.get(file) as number, low.get(target) as number))
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file) as number, index.get(target) as number))
      }
    }
    if (low.get(file) !== index.get(file)) return
    const component: string[] = []
    let member: string
    do {
      member = stack.pop() as string
      onStack.delete(member)
      component.push(member)
    } while (member !== file)
    if (component.length > 1 || graph.get(file)?.includes(file)) found.push(component.sort())
  }
  for (const file of [...graph.keys()].sort()) if (!index.has(file)) connect(file)
  return found.sort((a, b) => b.length - a.length || (a[0] as string).localeCompare(b[0] as string))
}

/** Within one circle, the imports that tie it: `from -> to` for each edge between two of its files. */
export function ties(graph: ReadonlyMap<string, readonly string[]>, circle: readonly string[]): string[] {
  const members = new Set(circle)
  return circle.flatMap((file) =>
    (graph.get(file) ?? []).filter((target) => members.has(target)).map((target) => `${file} -> ${target}`),
  )
}

/**
 * The graph of the folders: each file under a folder of a package's src (`packages/core/src/store/`) stands for that
 * folder, a file at the top of src for itself; the imports inside one folder drop out.
 */
export function byFolder(graph: ReadonlyMap<string, readonly string[]>): Map<string, string[]> {
  const folderOf = (file: string) => file.replace(/^(packages\/[^/]+\/src\/[^/]+)\/.*$/, '$1/')
  const folders = new Map<string, Set<string>>()
  for (const [file, targets] of graph) {
    const folder = folderOf(file)
    const imported = folders.get(folder) ?? new Set<string>()
    folders.set(folder, imported)
    for (const target of targets) if (folderOf(target) !== folder) imported.add(folderOf(target))
  }
  return new Map([...folders].map(([folder, imported]) => [folder, [...imported].sort()]))
}

if (require.main === module) {
  const graph = importGraph()
  const edges = [...graph.values()].reduce((sum, targets) => sum + targets.length, 0)
  const found = circles(graph)
  console.log(`${graph.size} files, ${edges} imports, ${found.length} circles`)
  for (const circle of found) {
    console.log(`\ncircle of ${circle.length} files:`)
    for (const tie of ties(graph, circle)) console.log(`  ${tie}`)
  }
  const folders = byFolder(graph)
  console.log(`\nby folder: ${circles(folders).length} circles`)
  for (const [folder, imported] of folders)
    if (folder.endsWith('/')) console.log(`  ${folder} -> ${imported.join(' ')}`)
}
