import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/** What the server saw of one request. */
export interface SeenRequest {
  method: string
  url: string
  headers: IncomingMessage['headers']
  body: string
}

export interface TestServer {
  url: string
  seen: SeenRequest[]
  close(): Promise<void>
}

/**
 * A plain node:http server on 127.0.0.1 and a free port, answering through `handler`, which gets the request's
 * number (0 for the first) so a test can script a sequence of answers.
 */
export async function startServer(
  handler: (req: SeenRequest, res: ServerResponse, index: number) => void,
): Promise<TestServer> {
  const seen: SeenRequest[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const request = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      }
      seen.push(request)
      handler(request, res, seen.length - 1)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections()
        server.close((err) => (err ? reject(err) : resolve()))
      }),
  }
}

/** Ends a response with a status, headers and a body. */
export function reply(res: ServerResponse, status: number, headers: Record<string, string> = {}, body = ''): void {
  res.writeHead(status, headers)
  res.end(body)
}
