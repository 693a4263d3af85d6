// The part of autocannon's programmatic API the HTTP benchmark uses (autocannon ships no types).
declare module 'autocannon' {
  interface Options {
    url: string
    connections?: number
    pipelining?: number
    duration?: number
    amount?: number
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
