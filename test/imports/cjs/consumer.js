// Loads every package the way a CommonJS app does (require through the exports maps), and the same packages as ES
// modules (what an `import` elsewhere in the app would load), then runs the checks of ../checks.cjs.
const express = require('express')
const Koa = require('koa')
const Fastify = require('fastify')
const { ENTRIES, check } = require('../checks.cjs')

async function main() {
  const own = Object.fromEntries(ENTRIES.map((entry) => [entry, require(entry)]))
  const other = Object.fromEntries(await Promise.all(ENTRIES.map(async (entry) => [entry, await import(entry)])))
  console.log(JSON.stringify(await check({ express, Koa, Fastify }, own, other)))
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
