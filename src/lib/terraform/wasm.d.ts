// `.wasm` imports: wrangler's default `CompiledWasm` rule and the Workers Vitest plugin both
// turn them into compiled modules (workerd forbids compiling WebAssembly at run time).
declare module "*.wasm" {
  const module: WebAssembly.Module;
  export default module;
}
