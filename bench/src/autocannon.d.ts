// The part of autocannon's programmatic API the HTTP benchmark uses (autocannon ships no types).
declare module 'autocannon' {
  interface Options {
    url: string
    connections?: number
    pipelining?: number
    duration?: number
    amount?: number
    /** How often to sample, in ms (default 1000); a run ends at the first sample after its last reply. */
    sampleInt?: number
  }
  interface Histogram {
    average: number
    total: number
  }
  interface Result {
    requests: Histogram
    duration: number
    errors: number
    timeouts: number
    non2xx: number
  }
  function autocannon(options: Options): Promise<Result>
  export = autocannon
}
