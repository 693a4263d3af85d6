// The code of docs/http.md: each region is a block of the doc, word for word (test/docs/code-blocks.test.ts), and
// `npm run typecheck` compiles this file, so the doc's code always builds.
import { concurrencyLimit, ipKey, rateLimit, shedLoad } from '@sluice/express'
import express from 'express'

declare function login(req: express.Request, res: express.Response): void
declare function tenantOf(req: express.Request): string
declare function exportCsv(req: express.Request, res: express.Response): void

export function mounting(): express.Express {
  // #region mounting
  const app = express()
  app.set('trust proxy', 1) // behind one proxy: see "Keys" below
  app.use(shedLoad({ maxInFlight: 64 })) // 503 when this instance is overloaded
  app.use(rateLimit({ limit: 100, window: '1m' })) // 429 when a client is over its limit
  app.use(express.json()) // body parsers after the limiters: a refused upload is never read
  app.post('/login', rateLimit({ name: 'login', limit: 5, window: '15m' }), login)
  app.get('/export', concurrencyLimit({ limit: 2 }), exportCsv)
  // #endregion mounting
  return app
}

export function keys(app: express.Express): void {
  // #region keys
  app.use(
    rateLimit({
      rules: [
        { name: 'user', limit: 100, window: '1m', key: (req) => req.get('x-api-key') ?? ipKey(req) },
        { name: 'tenant', limit: 2000, window: '1m', key: (req) => `tenant:${tenantOf(req)}` },
        { name: 'global', algorithm: 'token-bucket', limit: 400, window: '1s', key: () => 'all' },
      ],
    }),
  )
  // #endregion keys
}

export function options(app: express.Express): void {
  // #region cost-skip-refund
  app.use(
    rateLimit({
      limit: 100,
      window: '1m',
      cost: (req) => (req.path === '/export' ? 25 : 1), // a heavy request takes 25 of the 100
      skip: (req) => req.path === '/health', // neither counted nor given headers
      refund: (_req, res) => res.statusCode >= 500, // our failures do not count against the client
    }),
  )
  // #endregion cost-skip-refund
  // #region on-rejected
  app.use(
    rateLimit({
      limit: 100,
      window: '1m',
      onRejected: (_req, res, decision) => {
        // RateLimit, Retry-After and Cache-Control are already set.
        res
          .status(429)
          .type('text')
          .send(`Slow down: try again in ${Math.ceil(decision.retryAfterMs / 1000)} s.`)
      },
    }),
  )
  // #endregion on-rejected
}
