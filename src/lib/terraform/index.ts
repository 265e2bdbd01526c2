/**
 * Terraform source reading for module ingestion (N4), the planner (N7) and the design
 * checks (N12). Worker code imports from here; this entry loads the parser's WebAssembly
 * through `.wasm` imports, so it cannot be imported by Node (use the files it re-exports).
 * @module
 */

import { type IngestOptions, type IngestResult, ingestModuleWith } from "./ingest-module";
import { getTerraformParser } from "./workerd-parser";

export type { IngestOptions, IngestResult } from "./ingest-module";
export { summarizeModule, variablesReached } from "./summarize-module";
export type * from "./types";
export { getTerraformParser } from "./workerd-parser";

/**
 * Ingests a module version's `.tar.gz` (bytes or an R2 body stream) with the isolate's
 * parser: `{ ok: true, summary }` for an `ok` version, `{ ok: false, error }` with the
 * reason for `reg_ingress_failed`. Never throws for bad input; a failure to load the
 * parser itself (a deployment problem) does throw, so the Queue consumer retries.
 *
 * @example
 * const object = await env.MODULES.get(key);
 * const result = await ingestModule(object.body);
 * if (!result.ok) await markFailed(versionId, result.error);
 */
export async function ingestModule(
  gzipBytes: Uint8Array | ReadableStream<Uint8Array>,
  options: IngestOptions = {},
): Promise<IngestResult> {
  return ingestModuleWith(await getTerraformParser(), gzipBytes, options);
}
