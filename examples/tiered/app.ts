// Tiered limits on Redis, shared by every instance of the service:
// - each user: 100 requests a minute,
// - each tenant (all its users together): 1000 a minute,
// - the whole service: a token bucket of 400, refilling 400 a second, to protect the database,
// - POST /login: 5 attempts per client IP per 15 minutes, counted apart from everything else.
// A request must pass the user, tenant and global rules, and is charged to all three or to none, so a tenant that
// is over its limit does not use up its users' allowances. Run: see README.md.
import type { Store } from '@sluice/core'
import { rateLimit } from '@sluice/express'
import express, { type Request } from 'express'

/** Who is calling: in a real service, from a session or a verified API key. */
interface Caller {
  readonly user: string
  readonly tenant: string
}

const API_KEYS: Readonly<Record<string, Caller>> = {
  'key-alice': { user: 'alice', tenant: 'acme' },
  'key-bob': { user: 'bob', tenant: 'acme' },
  'key-carol': { user: 'carol', tenant: 'globex' },
}

function callerOf(req: Request): Caller | undefined {
  const apiKey = req.get('x-api-key')
  return apiKey === undefined ? undefined : API_KEYS[apiKey]
}

export interface TieredOptions {
  /** A RedisStore in production; every instance given a store on the same Redis shares the counts. */
  store: Store
  /** Set behind a reverse proxy, so the login limit counts clients and not the proxy. */
  trustProxy?: boolean | number | string
}

export function createApp({ store, trustProxy }: TieredOptions): express.Express {
  const app = express()
  if (trustProxy !== undefined) app.set('trust proxy', trustProxy)

  // The strict login limit, by client IP: mounted before the API limit so an attempt is counted here only.
  app.post('/login', rateLimit({ store, prefix: 'tiered', name: 'login', limit: 5, window: '15m' }), (_req, res) => {
    res.status(401).json({ error: 'wrong password' })
  })

  app.use('/api', (req, res, next) => {
    if (callerOf(req) === undefined) {
      res.status(401).json({ error: 'an x-api-key header is required' })
      return
    }
    next()
  })
  app.use(
    '/api',
    rateLimit({
      store,
      prefix: 'tiered',
      rules: [
        { name: 'user', limit: 100, window: '1m', key: (req) => callerOf(req)?.user ?? '' },
        { name: 'tenant', limit: 1000, window: '1m', key: (req) => callerOf(req)?.tenant ?? '' },
        { name: 'global', algorithm: 'token-bucket', limit: 400, window: '1s', key: () => 'all' },
      ],
    }),
  )
  app.get('/api/projects', (req, res) => {
    // req.rateLimit.rules holds every rule's decision: the client sees them all in the RateLimit header too.
    const rules = req.rateLimit?.rules?.map(({ rule, remaining }) => ({ rule, remaining }))
    res.json({ projects: ['apollo', 'gemini'], rules })
  })
  return app
}
