// Preloaded into child processes that run the TypeScript sources under tsx: a `.lua` file loads as its text, the
// way jest (scripts/jest-text-transform.js) and tsup (`--loader .lua=text`) load it.
const { readFileSync } = require('node:fs')

require.extensions['.lua'] = (module, filename) => {
  module.exports = readFileSync(filename, 'utf8')
}
