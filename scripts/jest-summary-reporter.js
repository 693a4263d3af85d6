// Prints one plain closing line, `jest: N passed, N failed, N skipped`, after jest's own summary, so that
// a CI reading the last lines sees the counts in a form that does not depend on jest's layout.
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const failed = results.numFailedTests + results.numRuntimeErrorTestSuites
    const line = `jest: ${results.numPassedTests} passed, ${failed} failed, ${results.numPendingTests} skipped`
    // Jest prints its own summary after the reporters have run: say ours last, as the process ends.
    process.once('exit', () => process.stderr.write(`${line}\n`))
  }
}
module.exports = SummaryReporter
