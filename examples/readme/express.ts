// The root README's Express quick start, quoted there word for word; test/docs/readme.test.ts runs it over HTTP.
// #region quick-start
import { rateLimit } from '@sluice/express'
import express from 'express'

const app = express()
app.use(rateLimit({ limit: 100, window: '1m' })) // 100 requests a minute per client IP
app.use(express.json()) // body parsers after the limiter: a refused request is never read
app.get('/', (req, res) => {
  res.json({ hello: 'world', remaining: req.rateLimit?.remaining })
})
app.listen(3000)
// #endregion quick-start
