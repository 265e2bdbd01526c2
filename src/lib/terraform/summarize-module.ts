/**
 * Builds a {@link ModuleSummary} for a module directory from the files of an archive:
 * merges its `.tf` files, reports duplicate variable and output names (N4), and follows
 * local module calls into the same archive, recursively, for the planner (N7).
 */

import type { TerraformParser } from "./parser";
import { readTerraformFile } from "./read-file";
import type { ModuleCallSummary, ModuleSummary, References, SummaryError } from "./types";

/**
 * Decision B9: how deep local module calls may nest (the root calling a module is depth 1).
 * Real modules nest two or three levels; deeper calls fail ingestion.
 */
export const MAX_MODULE_DEPTH = 8;

/**
 * Decision B9: bounds of the stored summary, which repeats a submodule under every call
 * that reaches it. Calls that reach one module many ways (a lattice of calls) would
 * otherwise grow it exponentially from a few KB of source.
 */
export const MAX_SUMMARY_NODES = 10_000;
export const MAX_SUMMARY_BYTES = 1024 * 1024;

/** Options of {@link summarizeModule}. */
export interface SummarizeOptions {
  /** Directory of the module inside the archive; `` (the default) is the root. */
  path?: string;
}

/** `a/b` + `../c` → `a/c`; null when the result leaves the archive. */
export function joinArchivePath(dir: string, relative: string): string | null {
  const parts = dir === "" ? [] : dir.split("/");
  for (const segment of relative.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") {
      if (parts.length === 0) return null;
      parts.pop();
    } else parts.push(segment);
  }
  return parts.join("/");
}

/** The `.tf` files directly in `dir`, in Terraform's lexical order. */
function filesIn(files: ReadonlyMap<string, string>, dir: string): string[] {
  const prefix = dir === "" ? "" : `${dir}/`;
  return [...files.keys()]
    .filter((p) => p.startsWith(prefix) && p.endsWith(".tf") && !p.slice(prefix.length).includes("/"))
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Message for a name declared twice, naming both places. */
function duplicateMessage(
  what: string,
  name: string,
  first: { file: string; line: number },
  second: { file: string; line: number },
): string {
  return first.file === second.file
    ? `duplicate ${what} "${name}" in ${first.file} at lines ${first.line} and ${second.line}`
    : `duplicate ${what} "${name}" in ${first.file} and ${second.file}`;
}

/** Reports every name after its first declaration. */
function findDuplicates(
  items: { name: string; file: string; line: number }[],
  what: "variable" | "output",
): SummaryError[] {
  const first = new Map<string, { file: string; line: number }>();
  const errors: SummaryError[] = [];
  for (const item of items) {
    const seen = first.get(item.name);
    if (seen) {
      errors.push({
        kind: what === "variable" ? "duplicate-variable" : "duplicate-output",
        file: item.file,
        line: item.line,
        message: duplicateMessage(what, item.name, seen, item),
      });
    } else first.set(item.name, item);
  }
  return errors;
}

/**
 * Summarises one module directory of an extracted archive, with its local submodules.
 *
 * Only the directory itself and the directories its local `module` calls reach are
 * parsed; other directories (`examples/`, `test/`) are ignored. A submodule reached
 * twice is parsed once and shared.
 *
 * @param files archive path → source, as returned by `extractModuleTarball`.
 * @param parser see `loadTerraformParser` / `getTerraformParser`.
 */
export function summarizeModule(
  files: ReadonlyMap<string, string>,
  parser: TerraformParser,
  options: SummarizeOptions = {},
): ModuleSummary {
  const cache = new Map<string, ModuleSummary>();
  return summarizeDirectory(files, parser, options.path ?? "", [], cache);
}

function summarizeDirectory(
  files: ReadonlyMap<string, string>,
  parser: TerraformParser,
  dir: string,
  stack: string[],
  cache: Map<string, ModuleSummary>,
): ModuleSummary {
  const cached = cache.get(dir);
  if (cached) return cached;
  const summary: ModuleSummary = {
    path: dir,
    files: filesIn(files, dir),
    requiredVersions: [],
    variables: [],
    outputs: [],
    requiredProviders: [],
    providerConfigs: [],
    resources: [],
    dataSources: [],
    moduleCalls: [],
    locals: Object.create(null) as Record<string, References>,
    errors: [],
    warnings: [],
  };
  const calls: Omit<ModuleCallSummary, "module">[] = [];
  for (const file of summary.files) {
    let source: string;
    try {
      source = files.get(file)!;
    } catch (err) {
      // A subdirectory's file is decoded when first read (TerraformFiles in src/lib/tarball).
      if (!(err instanceof Error && err.name === "TfEncodingError")) throw err;
      summary.errors.push({ kind: "syntax", file, line: 1, message: err.message });
      continue;
    }
    const contents = readTerraformFile(parser, file, source);
    summary.requiredVersions.push(...contents.requiredVersions);
    summary.variables.push(...contents.variables);
    summary.outputs.push(...contents.outputs);
    summary.requiredProviders.push(...contents.requiredProviders);
    summary.providerConfigs.push(...contents.providerConfigs);
    summary.resources.push(...contents.resources);
    summary.dataSources.push(...contents.dataSources);
    summary.errors.push(...contents.errors);
    calls.push(...contents.moduleCalls);
    for (const local of contents.locals) summary.locals[local.name] = local.references;
  }
  summary.errors.push(...findDuplicates(summary.variables, "variable"), ...findDuplicates(summary.outputs, "output"));

  const inner = [...stack, dir];
  for (const call of calls) {
    let module: ModuleSummary | null = null;
    if (call.local && call.source !== null) {
      const target = joinArchivePath(dir, call.source);
      const where = `module "${call.name}" in ${call.file}`;
      if (target === null) summary.warnings.push(`${where}: source "${call.source}" is outside the archive`);
      else if (inner.includes(target)) summary.warnings.push(`${where}: source "${call.source}" calls itself`);
      else if (inner.length > MAX_MODULE_DEPTH) {
        summary.errors.push({
          kind: "limit",
          file: call.file,
          line: call.line,
          message: `${where}: local module calls nested more than ${MAX_MODULE_DEPTH} deep (module-call depth limit)`,
        });
      } else if (filesIn(files, target).length === 0) {
        summary.warnings.push(`${where}: source "${call.source}" has no .tf files in the archive`);
      } else module = summarizeDirectory(files, parser, target, inner, cache);
    }
    summary.moduleCalls.push({ ...call, module });
  }
  cache.set(dir, summary);
  return summary;
}

/** Every error of a summary and of the submodules it expands, each reported once. */
export function allErrors(summary: ModuleSummary): SummaryError[] {
  const seen = new Set<ModuleSummary>();
  const out: SummaryError[] = [];
  const visit = (s: ModuleSummary) => {
    if (seen.has(s)) return;
    seen.add(s);
    out.push(...s.errors);
    for (const call of s.moduleCalls) if (call.module) visit(call.module);
  };
  visit(summary);
  return out;
}

/**
 * The variables that `references` reach directly or through locals of `summary`, followed
 * transitively (N7: "references, directly or through locals, a variable"). Sorted; local
 * names that the module does not define are ignored; cycles are harmless.
 */
export function variablesReached(summary: ModuleSummary, references: References): string[] {
  const variables = new Set(references.variables);
  const seen = new Set<string>();
  const pending = [...references.locals];
  while (pending.length > 0) {
    const name = pending.pop()!;
    if (seen.has(name)) continue;
    seen.add(name);
    const local = summary.locals[name];
    if (!local) continue;
    for (const v of local.variables) variables.add(v);
    pending.push(...local.locals);
  }
  return [...variables].sort();
}

/**
 * Decision B9: why the stored form of `summary` (JSON, each submodule repeated under every
 * call that reaches it) would be over {@link MAX_SUMMARY_NODES} module summaries or
 * {@link MAX_SUMMARY_BYTES} bytes, or null when it fits. Measured on the shared graph,
 * each module once, so the measurement itself stays small whatever the expansion.
 */
export function summaryBoundError(summary: ModuleSummary): string | null {
  const encoder = new TextEncoder();
  // Saturating counts: anything above a bound is "above", so numbers stay small.
  const memo = new Map<ModuleSummary, { nodes: number; bytes: number }>();
  const measure = (s: ModuleSummary): { nodes: number; bytes: number } => {
    const known = memo.get(s);
    if (known) return known;
    // The node's own JSON with each expanded call shown as `null`; depth ≤ MAX_MODULE_DEPTH.
    const own = JSON.stringify({ ...s, moduleCalls: s.moduleCalls.map((c) => ({ ...c, module: null })) });
    let nodes = 1;
    let bytes = encoder.encode(own).length;
    for (const call of s.moduleCalls) {
      if (!call.module) continue;
      const child = measure(call.module);
      nodes = Math.min(nodes + child.nodes, MAX_SUMMARY_NODES + 1);
      bytes = Math.min(bytes + child.bytes - "null".length, MAX_SUMMARY_BYTES + 1);
    }
    const result = { nodes, bytes };
    memo.set(s, result);
    return result;
  };
  const { nodes, bytes } = measure(summary);
  if (nodes > MAX_SUMMARY_NODES) {
    return `module calls expand to more than ${MAX_SUMMARY_NODES} module summaries (local modules reached through many paths; summary node limit)`;
  }
  if (bytes > MAX_SUMMARY_BYTES) return `the module summary is larger than 1 MiB (summary size limit)`;
  return null;
}
