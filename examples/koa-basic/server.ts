import { createApp } from './app'

const { PORT = '3000' } = process.env
const port = Number(PORT)
createApp().listen(port, () => console.log(`koa-basic on http://localhost:${port}/items`))
