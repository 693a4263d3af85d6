// Test helpers for the metrics examples: serve an app on a loopback port, and read a sample from Prometheus text.

import type { RequestListener } from 'node:http'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

/** Serves `app` on a free loopback port; `close` stops it. */
export async function serve(app: RequestListener): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer(app)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve, reject) => server.close((e) => (e ? reject(e) : resolve()))),
  }
}

/** Sends `count` GETs to `url` one after the other (as the client with `apiKey`) and returns their statuses. */
export async function statuses(url: string, count: number, apiKey = 'alice'): Promise<number[]> {
  const result: number[] = []
  for (let i = 0; i < count; i++) {
    const response = await fetch(url, { headers: { 'x-api-key': apiKey } })
    await response.arrayBuffer()
    result.push(response.status)
  }
  return result
}

/**
 * The value of the sample `name{labels}` in a Prometheus text exposition, or undefined when there is none. Labels
 * must be given in the order the exposition writes them.
 */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const shown = Object.entries(labels)
    .map(([label, value]) => `${label}="${value}"`)
    .join(',')
  const prefix = shown === '' ? `${name} ` : `${name}{${shown}} `
  const line = text.split('\n').find((l) => l.startsWith(prefix))
  return line === undefined ? undefined : Number(line.slice(prefix.length))
}
