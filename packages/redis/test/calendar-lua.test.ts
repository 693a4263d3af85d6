// calendar.lua's period_at, run by a real redis-server, against the TypeScript periodAt it mirrors.
import fc from 'fast-check'
import { compileCalendarPeriod, periodAt } from '../../core/src/calendar'
import calendar from '../src/lua/calendar.lua'
import { scriptOnRedis } from './fixtures/lua-script'

// ARGV: the boundaries, then the time (ms), or '' for the Redis server's clock. Returns start, end, outside, time.
const DRIVER = `
local boundaries = {}
for i = 1, #ARGV - 1 do boundaries[i] = tonumber(ARGV[i]) end
local now
if ARGV[#ARGV] == '' then
  if redis.replicate_commands ~= nil then redis.replicate_commands() end
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
else
  now = tonumber(ARGV[#ARGV])
end
local start_ms, end_ms, outside = period_at(boundaries, now)
return { start_ms, end_ms, outside, now }
`
const run = scriptOnRedis(`${calendar.trimEnd()}\n${DRIVER}`)

async function luaPeriodAt(boundaries: readonly number[], nowMs: number | '') {
  const [startMs, endMs, outside, now] = (await run(...boundaries.map(String), String(nowMs))) as [
    number,
    number,
    number,
    number,
  ]
  return { period: { startMs, endMs, outside }, nowMs: now }
}

test('calendar.lua declares period_at, the twin of periodAt', () => {
  expect(calendar).toContain('local function period_at(boundaries, now)')
})

test('Lua and TypeScript pick the same period for any boundaries and time, inside the list or outside it', async () => {
  const boundaries = fc
    .uniqueArray(fc.integer({ min: -1e13, max: 1e13 }), { minLength: 2, maxLength: 8 })
    .map((list) => list.sort((a, b) => a - b))
  // Times near the boundaries, where an off-by-one would show, as well as anywhere.
  const scenario = boundaries.chain((list) =>
    fc.tuple(
      fc.constant(list),
      fc.oneof(
        fc.integer({ min: -2e13, max: 2e13 }),
        fc.tuple(fc.constantFrom(...list), fc.integer({ min: -2, max: 2 })).map(([b, d]) => b + d),
      ),
    ),
  )
  await fc.assert(
    fc.asyncProperty(scenario, async ([list, nowMs]) => {
      expect((await luaPeriodAt(list, nowMs)).period).toEqual(periodAt(list, nowMs))
    }),
    { numRuns: 1000 },
  )
})

test('on the boundaries an instance sends, the Redis clock picks the period of Redis time in any zone', async () => {
  const zones = ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kathmandu', 'Pacific/Kiritimati']
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom<'day' | 'month'>('day', 'month'),
      fc.constantFrom(...zones),
      fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2100, 0, 1) }),
      fc.integer({ min: -3_600_000, max: 3_600_000 }),
      async (period, timeZone, instanceMs, skewMs) => {
        const calendarPeriod = compileCalendarPeriod({ period, timeZone })
        const boundaries = calendarPeriod.boundariesAround(instanceMs)
        const { period: picked } = await luaPeriodAt(boundaries, instanceMs + skewMs)
        expect(picked).toEqual({ ...calendarPeriod.at(instanceMs + skewMs), outside: 0 })
      },
    ),
    { numRuns: 300 },
  )
})

test("with Redis's own TIME: the period of the Redis clock, an instance's boundaries around its own", async () => {
  const daily = compileCalendarPeriod({ period: 'day', timeZone: 'Europe/Berlin' })
  const boundaries = daily.boundariesAround(Date.now())
  const { period, nowMs } = await luaPeriodAt(boundaries, '')
  expect(period).toEqual(periodAt(boundaries, nowMs))
  expect(period).toEqual({ ...daily.at(nowMs), outside: 0 })
})
