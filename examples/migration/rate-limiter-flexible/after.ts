import { createLimiter } from '@sluice/core'
import express from 'express'

export function createApp(): express.Express {
  const limiter = createLimiter({ prefix: 'api', algorithm: 'fixed-window', limit: 10, window: '1s' })
  const app = express()
  app.use(async (req, res, next) => {
    const decision = await limiter.consume(req.ip ?? 'unknown')
    if (decision.allowed) return next()
    res.set('Retry-After', String(Math.ceil(decision.retryAfterMs / 1000)))
    res.status(429).send('Too Many Requests')
  })
  app.get('/items', (_req, res) => {
    res.json({ items: [] })
  })
  return app
}
