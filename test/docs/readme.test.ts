// The root README's quick starts: an install line and a block per framework, each block quoted word for word from
// examples/readme/ (code-blocks.test.ts), and each run here as it is written, over real HTTP. The only change is
// where it listens: its `listen(3000)` is sent to a free loopback port, so that the suite can run beside others.
import type { Server } from 'node:http'
import { Server as NetServer } from 'node:net'
import supertest from 'supertest'
import { fences, read } from './markdown'

const FRAMEWORKS = ['express', 'koa', 'fastify'] as const

const readme = fences(read('README.md'))

describe.each(FRAMEWORKS)('the %s quick start', (framework) => {
  it('is in the README: its install line, then its block quoted from examples/readme/', () => {
    const block = readme.findIndex(
      (fence) => fence.lineBefore === `<!-- code: examples/readme/${framework}.ts#quick-start -->`,
    )
    expect(block).toBeGreaterThan(0)
    expect(readme[block - 1]).toMatchObject({ lang: 'sh', text: `npm install @sluice/${framework}` })
  })

  let servers: Server[] = []
  afterEach(async () => {
    jest.restoreAllMocks()
    for (const server of servers) server.closeAllConnections()
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))))
    servers = []
  })

  /** Runs the example as a module, and resolves with its server once that listens. */
  function run(): Promise<Server> {
    const listen = NetServer.prototype.listen
    return new Promise((resolve, reject) => {
      jest.spyOn(NetServer.prototype, 'listen').mockImplementation(function (this: NetServer, ...args: unknown[]) {
        const [first] = args
        // Express and Koa call listen(3000), Fastify listen({ port: 3000, host }) with a loopback host it resolved.
        if (first === 3000) args.splice(0, 1, 0, '127.0.0.1')
        else if (typeof first === 'object' && first !== null && (first as { port?: unknown }).port === 3000) {
          args[0] = { ...first, port: 0 }
        }
        servers.push(this as Server)
        // The first server is the app's (Fastify then binds its other loopback addresses to the same port).
        if (servers.length === 1) this.once('listening', () => resolve(this as Server)).once('error', reject)
        return listen.apply(this, args as Parameters<typeof listen>)
      })
      jest.isolateModules(() => {
        require(`../../examples/readme/${framework}`)
      })
    })
  }

  it('runs: 200 with the limit of 100 a minute in its RateLimit headers and the decision on the request', async () => {
    const server = await run()
    const res = await supertest(server).get('/').expect(200)
    expect(res.body).toEqual({ hello: 'world', remaining: 99 })
    expect(res.get('ratelimit-policy')).toBe('"default";q=100;w=60')
    expect(res.get('ratelimit')).toMatch(/^"default";r=99;t=\d+$/)
    if (framework === 'fastify') {
      const login = await supertest(server).post('/login').expect(200)
      expect(login.get('ratelimit-policy')).toBe('"default";q=5;w=900')
      expect(login.get('ratelimit')).toMatch(/^"default";r=4;t=\d+$/)
    }
  })
})
