// Compiled with `strict` against the packed types, as CommonJS (the `require` conditions: the .d.ts files).
import { createLimiter, type Decision, InvalidOptionError, type SluiceErrorCode } from '@sluice/core'
import { rateLimit as expressRateLimit } from '@sluice/express'
import { rateLimit as fastifyRateLimit } from '@sluice/fastify'
import { rateLimit as koaRateLimit } from '@sluice/koa'

import express = require('express')
import Koa = require('koa')
import Fastify = require('fastify')

const limiter = createLimiter({ rules: [{ name: 'user', limit: 100, window: '1m' }] })
export const decide = (key: string): Promise<Decision> => limiter.consume([key])

express().use(expressRateLimit({ limit: 100, window: '1m' }))
new Koa().use(koaRateLimit({ limit: 100, window: '1m' }))
void Fastify().register(fastifyRateLimit, { limit: 100, window: '1m' })

export function codeOf(error: unknown): SluiceErrorCode | 'other' {
  return error instanceof InvalidOptionError ? error.code : 'other'
}

// @ts-expect-error: the types refuse a window that is not a duration (they are not `any`)
createLimiter({ limit: 1, window: 'soon' })
