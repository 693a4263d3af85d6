// Starts limiter-worker processes (TypeScript sources under tsx; jest's module mapping does not reach children)
// and talks to them over IPC.
import { type ChildProcess, fork } from 'node:child_process'
import { join } from 'node:path'
import type { ClientKind } from '../../scripts/redis-clients'
import type { WorkerCommand, WorkerReply } from './workers/limiter-worker'

export interface Worker {
  readonly process: ChildProcess
  /** Where the worker's Express server listens (on 127.0.0.1). */
  readonly httpPort: number
  /** Sends a round and resolves with how many requests this process saw admitted. */
  run(command: Exclude<WorkerCommand, { type: 'exit' | 'warnings' }>): Promise<Extract<WorkerReply, { type: 'done' }>>
  /** What the worker's store and limiters have warned about so far (their logger is console). */
  warnings(): Promise<string[]>
  stop(): Promise<void>
}

/**
 * Starts a worker on the redis-server at `port`, its own clock shifted by `skewMs`, its RedisStore on a client of
 * `kind`.
 */
export async function startWorker(port: number, skewMs = 0, kind: ClientKind = 'ioredis'): Promise<Worker> {
  const child = fork(join(__dirname, 'workers/limiter-worker.ts'), [String(port), String(skewMs), kind], {
    execArgv: ['--require', join(__dirname, 'workers/lua-text.cjs'), '--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const httpPort = await new Promise<number>((resolve, reject) => {
    child.once('message', (reply: WorkerReply) =>
      reply.type === 'ready' ? resolve(reply.httpPort) : reject(new Error('bad hello')),
    )
    child.once('exit', (code) => reject(new Error(`worker exited before it was ready (${code})`)))
  })
  return {
    process: child,
    httpPort,
    run(command) {
      return new Promise((resolve, reject) => {
        const onExit = (code: number | null) => reject(new Error(`worker exited (${code})`))
        child.once('exit', onExit)
        child.once('message', (reply: WorkerReply) => {
          child.off('exit', onExit)
          if (reply.type === 'done') resolve(reply)
          else reject(new Error(`unexpected reply ${JSON.stringify(reply)}`))
        })
        child.send(command)
      })
    },
    warnings() {
      return new Promise((resolve, reject) => {
        child.once('message', (reply: WorkerReply) =>
          reply.type === 'warnings'
            ? resolve(reply.warnings)
            : reject(new Error(`unexpected reply ${JSON.stringify(reply)}`)),
        )
        child.send({ type: 'warnings' } satisfies WorkerCommand)
      })
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return
      if (child.connected) child.send({ type: 'exit' } satisfies WorkerCommand)
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000)
      await exited
      clearTimeout(timer)
    },
  }
}
