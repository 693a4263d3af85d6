// The code of docs/events.md: each region is a block of the doc, word for word (test/docs/code-blocks.test.ts), and
// `npm run typecheck` compiles this file, so the doc's code always builds.
import { subscribe } from 'node:diagnostics_channel'
import { createLimiter, type DecisionEvent, keyHash, type StoreEvent } from '@sluice/core'
import { rateLimit } from '@sluice/express'
import type express from 'express'

export function counting(): Map<string, number> {
  // #region subscribe
  const rejectedByRule = new Map<string, number>()
  subscribe('sluice:decision', (message) => {
    const event = message as DecisionEvent
    for (const rule of event.rules) {
      if (!rule.allowed) rejectedByRule.set(rule.rule, (rejectedByRule.get(rule.rule) ?? 0) + 1)
    }
  })
  subscribe('sluice:store', (message) => {
    const event = message as StoreEvent
    if (event.type === 'outage') console.error(`sluice: ${event.node} is down`, event.error)
  })
  // #endregion subscribe
  return rejectedByRule
}

export function oneKey(): void {
  // #region key-hash
  const watched = keyHash('user:42') // the same 16 hex digits in every process
  subscribe('sluice:decision', (message) => {
    const event = message as DecisionEvent
    if (event.rules.some((rule) => rule.keyHash === watched)) console.log('user:42', event.allowed)
  })
  // #endregion key-hash
}

export function rawKeys(app: express.Express): void {
  // #region raw-keys
  const limiter = createLimiter({ limit: 100, window: '1m', eventKeys: 'raw' })
  app.use(rateLimit({ limit: 100, window: '1m', eventKeys: 'raw' }))
  // #endregion raw-keys
  void limiter
}

declare function login(req: express.Request, res: express.Response): void

export function labels(app: express.Express): void {
  // #region label
  app.use(rateLimit({ label: 'api', limit: 100, window: '1m' }))
  app.post('/login', rateLimit({ label: 'login', limit: 5, window: '15m' }), login)
  // sluice:decision events: { limiter: 'api', rule: 'default', ... } and { limiter: 'login', rule: 'default', ... }
  // #endregion label
}
