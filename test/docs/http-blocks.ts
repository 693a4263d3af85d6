// The responses a doc shows as they go over the wire. Each ```http block follows a marker
// `<!-- response: <name> -->` naming a scenario of the doc's test, which produces that response over real HTTP. The
// block's status line, every header it lists and its JSON body must be what the scenario gets, and the rate-limit
// headers it leaves out must be absent.
import { read } from './markdown'

/** The headers a rate-limit response may carry: every one a block leaves out must be absent. */
const WATCHED = [
  'ratelimit',
  'ratelimit-policy',
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'retry-after',
  'cache-control',
]

export interface HttpExample {
  readonly name: string
  readonly status: number
  readonly headers: ReadonlyMap<string, string>
  readonly body: unknown
}

/** What a scenario gets: supertest's response has these. */
export interface HttpResponse {
  readonly status: number
  readonly headers: Record<string, string | undefined>
  readonly body: unknown
}

/** Every ```http block of a doc (a path from the repository's root), with the scenario named by the marker before it. */
export function httpExamples(doc: string): HttpExample[] {
  const lines = read(doc).split('\n')
  const found: HttpExample[] = []
  lines.forEach((line, i) => {
    if (line.trim() !== '```http') return
    const marker = /^<!-- response: ([\w-]+) -->$/.exec(lines[i - 1]?.trim() ?? '')
    if (marker === null) throw new Error(`${doc}:${i + 1}: an http block without a <!-- response: name --> marker`)
    const end = lines.indexOf('```', i + 1)
    const block = lines.slice(i + 1, end)
    const status = /^HTTP\/1\.1 (\d{3}) /.exec(block[0] ?? '')
    if (status === null) throw new Error(`${doc}:${i + 2}: a block starts with its status line`)
    const blank = block.indexOf('')
    const headerLines = block.slice(1, blank === -1 ? undefined : blank)
    const headers = new Map(
      headerLines.map((header) => {
        const colon = header.indexOf(': ')
        return [header.slice(0, colon).toLowerCase(), header.slice(colon + 2)] as const
      }),
    )
    const body = blank === -1 ? undefined : JSON.parse(block.slice(blank + 1).join('\n'))
    found.push({ name: marker[1] as string, status: Number(status[1]), headers, body })
  })
  return found
}

/** Expects `response` to be the one `example` shows. */
export function expectShown(example: HttpExample, response: HttpResponse): void {
  expect(response.status).toBe(example.status)
  for (const [header, value] of example.headers) expect([header, response.headers[header]]).toEqual([header, value])
  for (const header of WATCHED) {
    if (!example.headers.has(header)) expect([header, response.headers[header]]).toEqual([header, undefined])
  }
  if (example.body !== undefined) expect(response.body).toEqual(example.body)
}
