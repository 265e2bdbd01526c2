/**
 * The Terraform parser for Node tests: the same `loadTerraformParser` as production, fed
 * with modules compiled from the `.wasm` files on disk (Node cannot `import` them).
 */

import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { loadTerraformParser, type TerraformParser } from "../../../../src/lib/terraform/parser";

const require = createRequire(import.meta.url);
let parser: Promise<TerraformParser> | null = null;

/** One parser per test worker. */
export function nodeTerraformParser(): Promise<TerraformParser> {
  parser ??= (async () => {
    const [runtime, grammar] = await Promise.all(
      ["web-tree-sitter/web-tree-sitter.wasm", "@tree-sitter-grammars/tree-sitter-hcl/tree-sitter-terraform.wasm"].map(
        async (specifier) => WebAssembly.compile(await readFile(require.resolve(specifier))),
      ),
    );
    return loadTerraformParser({ runtime: runtime!, grammar: grammar! });
  })();
  return parser;
}
