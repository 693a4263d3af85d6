// Jest transform that loads a text file (the Lua scripts) as a string, the way tsup's `--loader .lua=text` does.
module.exports = {
  process(sourceText) {
    return { code: `module.exports = ${JSON.stringify(sourceText)};` }
  },
}
