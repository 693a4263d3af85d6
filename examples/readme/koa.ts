// The root README's Koa quick start, quoted there word for word; test/docs/readme.test.ts runs it over HTTP.
// #region quick-start
import { rateLimit } from '@sluice/koa'
import Koa from 'koa'

const app = new Koa()
app.use(rateLimit({ limit: 100, window: '1m' })) // 100 requests a minute per client IP
app.use((ctx) => {
  ctx.body = { hello: 'world', remaining: ctx.state.rateLimit?.remaining }
})
app.listen(3000)
// #endregion quick-start
