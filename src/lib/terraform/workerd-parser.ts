/**
 * The production parser: both WebAssembly modules are imported, so wrangler uploads them
 * as compiled modules (`CompiledWasm`, wrangler's default rule for `*.wasm`) and
 * the Workers Vitest plugin provides them the same way. Import this only from Worker code:
 * Node cannot import `.wasm` files (Node tests use `loadTerraformParser` directly).
 */

import grammar from "@tree-sitter-grammars/tree-sitter-hcl/tree-sitter-terraform.wasm";
import runtime from "web-tree-sitter/web-tree-sitter.wasm";
import { loadTerraformParser, type TerraformParser } from "./parser";

let parser: Promise<TerraformParser> | null = null;

/**
 * The isolate's Terraform parser, created on first use. Lazily, because instantiating
 * the runtime at global scope would add ~30 ms to every cold start, ingestion or not.
 */
export function getTerraformParser(): Promise<TerraformParser> {
  parser ??= loadTerraformParser({ runtime, grammar }, { hideNodeProcess: true }).catch((cause) => {
    parser = null;
    throw cause;
  });
  return parser;
}
