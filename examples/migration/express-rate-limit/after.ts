import { rateLimit } from '@sluice/express'
import express from 'express'

export function createApp(): express.Express {
  const app = express()
  app.set('trust proxy', 1)
  app.use(rateLimit({ algorithm: 'fixed-window', limit: 100, window: '15m', headers: 'draft-7' }))
  app.get('/items', (_req, res) => {
    res.json({ items: [] })
  })
  // Only failed attempts count: a successful login gives its cost back when its response ends.
  const loginLimit = rateLimit({
    name: 'login',
    algorithm: 'fixed-window',
    limit: 5,
    window: '1h',
    refund: (_req, res) => res.statusCode < 400,
  })
  app.post('/login', loginLimit, (req, res) => {
    res.sendStatus(req.get('x-password') === 'open sesame' ? 204 : 401)
  })
  return app
}
