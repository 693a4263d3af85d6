import { RedisStore } from '@sluice/redis'
import Redis from 'ioredis'
import { createApp } from './app'

async function main(): Promise<void> {
  const { PORT = '3000', REDIS_URL = 'redis://127.0.0.1:6379' } = process.env
  // A call the store gave up on must not reach Redis later (see "Client options" in the @sluice/redis README).
  const client = new Redis(REDIS_URL, { enableOfflineQueue: false, autoResendUnfulfilledCommands: false })
  // 'closed': while Redis is unreachable the API answers 503 rather than admitting without a shared count.
  const store = new RedisStore({ client, onError: 'closed' })
  const server = createApp({ store }).listen(Number(PORT), () => {
    console.log(`tiered on http://localhost:${PORT}/api/projects (x-api-key: key-alice), Redis at ${REDIS_URL}`)
  })
  process.once('SIGINT', () => {
    server.close()
    client.disconnect()
  })
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
