import { createApp } from './app'

async function main(): Promise<void> {
  const { PORT = '3000' } = process.env
  const app = await createApp()
  await app.listen({ port: Number(PORT) })
  console.log(`fastify-basic on http://localhost:${PORT}/items`)
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
