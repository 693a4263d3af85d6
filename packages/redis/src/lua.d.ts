// tsup bundles `.lua` files as text (`--loader .lua=text`) and jest loads them the same way.
declare module '*.lua' {
  const source: string
  export default source
}
