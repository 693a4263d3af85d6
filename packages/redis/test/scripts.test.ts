// The scripts as Redis runs them, assembled from src/lua (see script.ts): one snapshot per algorithm alone, and one of
// them all together, so that a change to a .lua file or to the assembly shows in review as the script Redis gets.
// A change that is meant: `npx jest packages/redis/test/scripts.test.ts -u`, and read the snapshot's diff.
import main from '../src/lua/main.lua'
import windowCount from '../src/lua/window-count.lua'
import { ALGORITHM_SOURCES, codeMask, scriptFor, scriptForMask } from '../src/script'

const codes = Object.keys(ALGORITHM_SOURCES)

test.each(codes)('the script for %s alone, as assembled', (code) => {
  const script = scriptFor([code])
  expect(script.source).toMatchSnapshot()
  expect(scriptForMask(codeMask([code]))).toEqual(script)
})

test('the script for every algorithm together, as assembled: each helper once', () => {
  const script = scriptFor(codes)
  expect(script.source).toMatchSnapshot()
  // The fixed and the calendar window share window-count.lua: once, before both.
  expect(script.source.split(windowCount.trimEnd()).length - 1).toBe(1)
})

test('every combination is its algorithms in the order of the table, with the same helpers and entry point', () => {
  const all = scriptFor(codes).source
  for (let mask = 1; mask < 1 << codes.length; mask++) {
    const used = codes.filter((_, bit) => (mask >> bit) & 1)
    const { source } = scriptForMask(mask)
    // Each algorithm's file appears as it does in the script of them all, and no other algorithm's.
    for (const code of codes) {
      const file = (ALGORITHM_SOURCES[code]?.source ?? '').trimEnd()
      expect(all).toContain(file)
      if (used.includes(code)) expect(source).toContain(file)
      else expect(source).not.toContain(file)
    }
    expect(source.endsWith(main.trimEnd())).toBe(true)
  }
})
