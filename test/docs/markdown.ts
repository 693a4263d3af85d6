// What the documentation suites read from Markdown: the project's Markdown files, their fenced blocks, links and
// headings. Small on purpose: the project's docs use plain CommonMark, and these suites must fail loudly rather than
// guess when they meet something else.
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'

export const ROOT = join(__dirname, '../..')

const SKIPPED_DIRECTORIES = new Set(['node_modules', 'dist', 'coverage', '.git', '.turbo', 'reports'])

/** Copies of the repository that are not its files: npm run mutate's sandboxes (.stryker-tmp, .stryker-tmp-client). */
const isSandbox = (name: string) => name.startsWith('.stryker-tmp')

/** Every Markdown file of the project, as paths from the root, in a stable order. */
export function markdownFiles(directory = ROOT): string[] {
  const found: string[] = []
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRECTORIES.has(entry.name) && !isSandbox(entry.name))
        found.push(...markdownFiles(join(directory, entry.name)))
    } else if (entry.name.endsWith('.md')) {
      found.push(relative(ROOT, join(directory, entry.name)))
    }
  }
  return found.sort()
}

export function read(path: string): string {
  return readFileSync(join(ROOT, path), 'utf8')
}

/** The text a marker names: a whole file, or one region of it, dedented. */
export function quoted(marker: string): string {
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

/** A fenced code block: its info string (`ts`, `http`...), its text, the line before it and where it starts. */
export interface Fence {
  readonly lang: string
  readonly text: string
  readonly lineBefore: string
  /** 1-based line of the opening fence. */
  readonly line: number
}

/** The fenced blocks of a Markdown text (``` fences, not indented). */
export function fences(markdown: string): Fence[] {
  const lines = markdown.split('\n')
  const found: Fence[] = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^(`{3,})(.*)$/.exec(lines[i] as string)
    if (open === null) continue
    const marker = open[1] as string
    let end = i + 1
    while (end < lines.length && (lines[end] as string).trimEnd() !== marker) end++
    found.push({
      lang: (open[2] as string).trim(),
      text: lines.slice(i + 1, end).join('\n'),
      lineBefore: (lines[i - 1] ?? '').trim(),
      line: i + 1,
    })
    i = end
  }
  return found
}

/**
 * The Markdown text without its fenced blocks and code spans, where links are not links. Line for line: a fenced
 * block, its fences included, leaves empty lines, so that a line of the prose is the same line of the text.
 */
export function prose(markdown: string): string {
  const kept: string[] = []
  let fence: string | undefined
  for (const line of markdown.split('\n')) {
    const marker = /^(`{3,})/.exec(line)?.[1]
    if (fence === undefined && marker !== undefined) fence = marker
    else if (fence !== undefined && line.trimEnd() === fence) fence = undefined
    else if (fence === undefined) {
      kept.push(line.replace(/(`+)(?:(?!\1).)+\1/g, ''))
      continue
    }
    kept.push('')
  }
  return kept.join('\n')
}

/** A link target of a Markdown text and the 1-based line it is written on. */
export interface Link {
  readonly target: string
  readonly line: number
}

/** Where a Markdown text names a link target, in this order; group 1 is the target. */
const LINK_PATTERNS = [
  /!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/dg, // inline links and images
  /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/dgm, // reference definitions
  /<([a-z][a-z0-9+.-]*:[^\s>]+)>/dgi, // autolinks
  /\b(?:href|src)\s*=\s*["']([^"']+)["']/dgi, // HTML href and src
]

/** Every link of a Markdown text: inline links and images, reference definitions, autolinks, HTML href/src. */
export function links(markdown: string): Link[] {
  const text = prose(markdown)
  const found: Link[] = []
  for (const pattern of LINK_PATTERNS) {
    for (const match of text.matchAll(pattern)) {
      const start = match.indices?.[1]?.[0] ?? (match.index as number)
      found.push({ target: match[1] as string, line: text.slice(0, start).split('\n').length })
    }
  }
  return found
}

/** Every link target of a Markdown text, in the order of `links`. */
export function linkTargets(markdown: string): string[] {
  return links(markdown).map((link) => link.target)
}

/** The anchors GitHub gives a Markdown text's headings (lower case, punctuation dropped, spaces to hyphens). */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>()
  const found = new Set<string>()
  let fence: string | undefined
  for (const line of markdown.split('\n')) {
    const marker = /^(`{3,})/.exec(line)?.[1]
    if (fence === undefined && marker !== undefined) {
      fence = marker
      continue
    }
    if (fence !== undefined) {
      if (line.trimEnd() === fence) fence = undefined
      continue
    }
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)
    if (heading === null) continue
    const slug = (heading[1] as string)
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-')
    const count = seen.get(slug) ?? 0
    seen.set(slug, count + 1)
    found.add(count === 0 ? slug : `${slug}-${count}`)
  }
  return found
}
