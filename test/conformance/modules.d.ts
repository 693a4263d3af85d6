// The older majors are installed under aliases; their APIs used here are the ones the current types describe.
declare module 'express4' {
  import express = require('express')
  export = express
}
declare module 'koa2' {
  import Koa = require('koa')
  export = Koa
}
declare module 'fastify4' {
  import Fastify = require('fastify')
  export = Fastify
}
