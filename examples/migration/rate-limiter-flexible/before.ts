import express from 'express'
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible'

export function createApp(): express.Express {
  const limiter = new RateLimiterMemory({ keyPrefix: 'api', points: 10, duration: 1 })
  const app = express()
  app.use(async (req, res, next) => {
    try {
      await limiter.consume(req.ip ?? 'unknown')
      next()
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection
      res.set('Retry-After', String(Math.ceil(rejection.msBeforeNext / 1000)))
      res.status(429).send('Too Many Requests')
    }
  })
  app.get('/items', (_req, res) => {
    res.json({ items: [] })
  })
  return app
}
