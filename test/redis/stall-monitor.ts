/**
 * The longest the whole process was frozen (a 5 ms ticker's worst lateness) while it ran. On a shared 2-core machine
 * the process can be descheduled for longer than 50 ms; no store can answer faster than its process runs, so the
 * outage and Cluster fault suites bound a consume by the timeout plus 50 ms plus that freeze, and report the freeze.
 */
export function stallMonitor(): { stop: () => number } {
  let last = performance.now()
  let worst = 0
  const ticker = setInterval(() => {
    const now = performance.now()
    worst = Math.max(worst, now - last - 5)
    last = now
  }, 5)
  return {
    stop() {
      clearInterval(ticker)
      return Math.max(0, worst)
    },
  }
}
