import { execFileSync } from 'node:child_process'
import { join } from 'node:path'

test('idle time grows while the event loop waits for a timer, and not while the instance runs code', () => {
  // In a process of its own: a test runner's process has other work of its own on its event loop.
  const output = execFileSync(process.execPath, ['--import', 'tsx', join(__dirname, 'fixtures/idle-time-child.ts')], {
    encoding: 'utf8',
  })
  const { busy, waiting } = JSON.parse(output) as { busy: number; waiting: number }
  expect(busy).toBe(0)
  expect(waiting).toBeGreaterThan(0)
})
