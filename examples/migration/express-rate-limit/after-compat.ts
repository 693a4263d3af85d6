import { rateLimit } from '@sluice/express/compat'
import express from 'express'

export function createApp(): express.Express {
  const app = express()
  app.set('trust proxy', 1)
  app.use(rateLimit({ windowMs: 15 * 60 * 1000, limit: 100, standardHeaders: 'draft-7', legacyHeaders: false }))
  app.get('/items', (_req, res) => {
    res.json({ items: [] })
  })
  // Only failed attempts count: a successful login is taken off the count when its response ends.
  const loginLimit = rateLimit({ windowMs: 60 * 60 * 1000, limit: 5, skipSuccessfulRequests: true })
  app.post('/login', loginLimit, (req, res) => {
    res.sendStatus(req.get('x-password') === 'open sesame' ? 204 : 401)
  })
  return app
}
