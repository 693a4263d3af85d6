// npm run playground: builds the playground (playground/ with the real core bundled in) and serves it on loopback.
// npm run playground:build [dir]: writes it as static files, by default to docs/playground/.
import { copyFileSync, mkdirSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { extname, join, normalize, resolve } from 'node:path'
import { build } from 'esbuild'

const ROOT = resolve(__dirname, '..')
export const DEFAULT_OUT = join(ROOT, 'docs', 'playground')
/** Where npm run playground serves it. */
const PORT = 4173

/** Bundles playground/main.ts (and with it @sluice/core from its sources) for the browser, beside its page. */
export async function buildPlayground(outDir = DEFAULT_OUT): Promise<string> {
  mkdirSync(outDir, { recursive: true })
  await build({
    entryPoints: [join(ROOT, 'playground', 'main.ts')],
    outfile: join(outDir, 'app.js'),
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    tsconfig: join(ROOT, 'tsconfig.json'),
    logLevel: 'warning',
  })
  copyFileSync(join(ROOT, 'playground', 'index.html'), join(outDir, 'index.html'))
  return outDir
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
}

/** Serves `dir` on 127.0.0.1 (port 0: any free one); nothing outside it. */
export function servePlayground(dir: string, port = 0): Promise<{ server: Server; url: string }> {
  const server = createServer(async (req, res) => {
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname
    const file = normalize(join(dir, path === '/' ? 'index.html' : path))
    if (!file.startsWith(dir)) {
      res.writeHead(403).end()
      return
    }
    try {
      const body = await readFile(file)
      res.writeHead(200, { 'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(body)
    } catch {
      res.writeHead(404).end()
    }
  })
  return new Promise((done) =>
    server.listen(port, '127.0.0.1', () =>
      done({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` }),
    ),
  )
}

/** A picture of the page as a visitor sees it, with the overload case run: docs/playground.png. */
async function screenshot(dir: string, file: string): Promise<void> {
  const { launchChromium } = await import('./chromium')
  const { server, url } = await servePlayground(dir)
  const browser = await launchChromium()
  try {
    const page = await browser.newPage({ viewport: { width: 1100, height: 900 } })
    await page.goto(url)
    await page.waitForFunction("document.body.dataset.runs === '1'")
    await page.locator('#load').selectOption('4')
    await page.locator('#run-overload').click()
    await page.waitForFunction("document.body.dataset.overload === '4'", undefined, { timeout: 60_000 })
    await page.screenshot({ path: file, fullPage: true })
  } finally {
    await browser.close()
    server.close()
  }
}

async function main(): Promise<void> {
  const [command = 'serve', dir] = process.argv.slice(2)
  const out = await buildPlayground(dir === undefined || command === 'screenshot' ? DEFAULT_OUT : resolve(dir))
  if (command === 'build') {
    console.log(`The playground is written to ${out}`)
    return
  }
  if (command === 'screenshot') {
    const file = dir === undefined ? join(ROOT, 'docs', 'playground.png') : resolve(dir)
    await screenshot(out, file)
    console.log(`Screenshot written to ${file}`)
    return
  }
  const { url } = await servePlayground(out, PORT)
  console.log(`The playground: ${url} (Ctrl-C stops it)`)
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error)
    process.exitCode = 1
  })
}
