import { createApp } from './app'

const { PORT = '3000' } = process.env
const port = Number(PORT)
createApp().app.listen(port, () =>
  console.log(`prometheus example: http://localhost:${port}/items, metrics at /metrics`),
)
