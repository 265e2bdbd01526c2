/**
 * Loads the tree-sitter runtime and the Terraform dialect of tree-sitter-hcl from
 * already-compiled WebAssembly modules. workerd forbids compiling WASM at run time, so in
 * the Worker both `.wasm` files arrive as imported `WebAssembly.Module`s (see
 * `workerd-parser.ts`); Node tests compile them from disk and pass them in.
 */

import { Language, Parser, type Tree } from "web-tree-sitter";

/** The two compiled modules the reader needs. */
export interface TreeSitterWasm {
  /** `web-tree-sitter/web-tree-sitter.wasm`. */
  runtime: WebAssembly.Module;
  /** `@tree-sitter-grammars/tree-sitter-hcl/tree-sitter-terraform.wasm`. */
  grammar: WebAssembly.Module;
}

/** Options of {@link loadTerraformParser}. */
export interface LoadOptions {
  /**
   * Hide `globalThis.process` while emscripten starts. Needed in workerd with
   * `nodejs_compat`: `process.versions.node` makes emscripten believe it runs on Node and
   * call `createRequire(import.meta.url)`, which throws in a wrangler bundle. Leave it off
   * in real Node, where that path works.
   */
  hideNodeProcess?: boolean;
}

/** A parser for Terraform source. Parsing is synchronous; one instance serves all callers. */
export interface TerraformParser {
  /** Parses one file. The caller must `delete()` the tree when done with it. */
  parse(source: string): Tree;
}

type EmscriptenInstantiate = (
  imports: WebAssembly.Imports,
  receive: (instance: WebAssembly.Instance, module: WebAssembly.Module) => void,
) => object;

/** Runs `start` with `globalThis.process` hidden, restoring it whatever happens. */
function withoutProcess<T>(start: () => T): T {
  const g = globalThis as Record<string, unknown>;
  const descriptor = Object.getOwnPropertyDescriptor(g, "process");
  if (!descriptor) return start();
  if (descriptor.configurable) delete g.process;
  else if (descriptor.writable) g.process = undefined;
  else return start(); // cannot hide it: let emscripten try
  try {
    return start();
  } finally {
    if (descriptor.configurable) Object.defineProperty(g, "process", descriptor);
    else g.process = descriptor.value;
  }
}

let runtimeReady: Promise<void> | null = null;

/**
 * Initialises the runtime (once per isolate: web-tree-sitter keeps it in module state)
 * and returns a parser for the Terraform dialect.
 *
 * @throws when the modules are not the expected ones (a build problem, not bad input).
 */
export async function loadTerraformParser(wasm: TreeSitterWasm, options: LoadOptions = {}): Promise<TerraformParser> {
  runtimeReady ??= (() => {
    const instantiateWasm: EmscriptenInstantiate = (imports, receive) => {
      // Instantiating an already-compiled module is allowed in workerd; compiling is not.
      receive(new WebAssembly.Instance(wasm.runtime, imports), wasm.runtime);
      return {};
    };
    // Emscripten reads `process` only synchronously at the start of init, so the promise
    // can be awaited after `process` is back.
    const init = () => Parser.init({ instantiateWasm } as Parameters<typeof Parser.init>[0]);
    return options.hideNodeProcess ? withoutProcess(init) : init();
  })().catch((cause) => {
    runtimeReady = null; // let a later call retry
    throw cause;
  });
  await runtimeReady;
  const language = Language.loadSync(wasm.grammar);
  const parser = new Parser();
  parser.setLanguage(language);
  return {
    parse(source) {
      const tree = parser.parse(source);
      // Only null without a language or with a cancelling callback: neither applies.
      if (!tree) throw new Error("tree-sitter returned no tree");
      return tree;
    },
  };
}
