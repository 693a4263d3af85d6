/**
 * `fn`, its `name` set to `name`: an adapter's middleware is named as its factory (`rateLimit`, `shedLoad`,
 * `concurrencyLimit`), which is what Express's router stack, stack traces and APM spans show. The bundler renames a
 * nested function that shares a top-level name (`rateLimit2`); the packages are built without esbuild's keep-names,
 * which would rename every closure on every call instead (an `Object.defineProperty` per request), so the few names a
 * user sees are set here, once, when the middleware is made.
 *
 * @example
 * const middleware = named(function rateLimit(req, res, next) { ... }, 'rateLimit')
 */
export function named<F extends (...args: never[]) => unknown>(fn: F, name: string): F {
  return Object.defineProperty(fn, 'name', { value: name, configurable: true })
}
