/**
 * Module version ingestion (decision N4): unpack the tarball within B5's limits, read the
 * Terraform source, and decide whether the version is `ok`.
 */

import { extractModuleTarball, type TarballLimits } from "../tarball";
import type { TerraformParser } from "./parser";
import { allErrors, summarizeModule, summaryBoundError } from "./summarize-module";
import type { ModuleSummary } from "./types";

/** Outcome of ingestion: the summary of an `ok` version, or why it is `reg_ingress_failed`. */
export type IngestResult = { ok: true; summary: ModuleSummary } | { ok: false; error: string };

/** How many problems one error message lists before summarising the rest. */
const MAX_LISTED_PROBLEMS = 5;

/** Options of {@link ingestModuleWith}. */
export interface IngestOptions {
  /** Overrides of the B5 limits, for tests. */
  limits?: Partial<TarballLimits>;
}

/**
 * Ingests a module tarball with a given parser (Node tests pass one built from the
 * `.wasm` files on disk; Worker code uses `ingestModule` from `./index`).
 *
 * A version fails when the archive breaks a B5 limit or an N4 entry rule, when a `.tf`
 * file of the root module or of a local submodule it calls has a syntax error, or when a
 * module declares a variable or output name twice. The error lists up to five problems,
 * e.g. `syntax error in main.tf at line 12: missing "}"; duplicate variable "region" in
 * main.tf and variables.tf`. Never throws for bad input.
 */
export async function ingestModuleWith(
  parser: TerraformParser,
  gzipBytes: Uint8Array | ReadableStream<Uint8Array>,
  options: IngestOptions = {},
): Promise<IngestResult> {
  const extracted = await extractModuleTarball(gzipBytes, options.limits);
  if (!extracted.ok) return extracted;
  const summary = summarizeModule(extracted.files, parser);
  if (extracted.tfJsonFiles.some((p) => !p.includes("/"))) {
    summary.warnings.push("files in Terraform JSON syntax (*.tf.json) are not read");
  }
  const errors = allErrors(summary);
  if (errors.length > 0) {
    const listed = errors.slice(0, MAX_LISTED_PROBLEMS).map((e) => e.message);
    const more = errors.length - listed.length;
    return { ok: false, error: listed.join("; ") + (more > 0 ? ` (and ${more} more)` : "") };
  }
  // B9: the stored summary is bounded (checked on the shared graph, before it is expanded).
  const tooBig = summaryBoundError(summary);
  if (tooBig) return { ok: false, error: tooBig };
  return { ok: true, summary };
}
