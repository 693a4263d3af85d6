// Loads every package the way an ES module app does (import through the exports maps), and the same packages as
// CommonJS (what a `require` in a dependency would load), then runs the checks of ../checks.cjs.
import { createRequire } from 'node:module'
import * as client from '@sluice/client'
import * as core from '@sluice/core'
import * as coreInternal from '@sluice/core/internal'
import * as coreStore from '@sluice/core/store'
import * as expressAdapter from '@sluice/express'
import * as expressCompat from '@sluice/express/compat'
import * as fastifyAdapter from '@sluice/fastify'
import * as koaAdapter from '@sluice/koa'
import * as redis from '@sluice/redis'
import express from 'express'
import Fastify from 'fastify'
import Koa from 'koa'
import checks from '../checks.cjs'

const own = {
  '@sluice/core': core,
  '@sluice/core/store': coreStore,
  '@sluice/core/internal': coreInternal,
  '@sluice/redis': redis,
  '@sluice/client': client,
  '@sluice/express': expressAdapter,
  '@sluice/express/compat': expressCompat,
  '@sluice/koa': koaAdapter,
  '@sluice/fastify': fastifyAdapter,
}
const require = createRequire(import.meta.url)
const other = Object.fromEntries(checks.ENTRIES.map((entry) => [entry, require(entry)]))
console.log(JSON.stringify(await checks.check({ express, Koa, Fastify }, own, other)))
