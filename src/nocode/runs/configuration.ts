/**
 * What a run plans (decisions N7, N8): the configuration snapshot stored on each run, the
 * effective variable values the planner compares, and the plan of a configuration
 * against the workspace's baseline.
 *
 * - Effective value of a module variable: the workspace's `engine` var, else the
 *   version's default (N7). Sensitive values are represented only by the keyed hash the
 *   workspace stores with them (`sensitiveValueHash` in ../workspaces/vars.ts, B2).
 * - Baseline: the configuration of the last applied run (the run that recorded the
 *   workspace's current state version), or empty.
 */
import type { Db } from "../../db/client";
import type { workspaceVars } from "../../db/schema/nocode";
import type { ModuleSummary, VariableSummary } from "../../lib/terraform/types";
import { cachedNocode } from "../cache";
import { optionSetFingerprint, workspaceVarsFingerprint } from "../no-code-modules/fingerprint";
import type { NoCodeModuleRow, VariableOptionSet } from "../no-code-modules/repo";
import { type EffectiveValue, type Plan, planRun } from "../planner";
import { moduleVersionByIdQuery, type RegistryModuleVersionRow, versionSummary } from "../registry/repo";
import { type WorkspaceBaselineRow, workspaceBaselineQuery } from "./repo";

/** A stored workspace variable as runs see it (the workspaces feature owns the rows). */
type StoredVar = typeof workspaceVars.$inferSelect;

/** The snapshot of what a run plans, stored as `runs.configuration` (JSON). */
export interface RunConfiguration {
  v: 1;
  /** The no-code module the run comes from, and its registry module. */
  noCodeModuleId: string;
  registryModuleId: string;
  /** The registry module version planned (`modver-…`) and its version string. */
  moduleVersionId: string;
  version: string;
  /** Effective values of the version's variables (sensitive ones as keyed hashes). */
  values: Record<string, EffectiveValue>;
  /** optionSetFingerprint of the module's variable options at plan time (N8). */
  optionSetFingerprint: string;
  /** The module's `enabled` and `version-pin` at plan time (N8 staleness). */
  moduleEnabled: boolean;
  modulePin: string | null;
  /** workspaceVarsFingerprint of the workspace's stored vars at plan time (N8 staleness). */
  workspaceVarsFingerprint: string;
}

/** A failure that retrying cannot fix: the run becomes `errored` (the message is acknowledged). */
export class RunFailure extends Error {}

/** What the effective values need of a workspace variable (a stored row fits). */
export type EngineVarLike = Pick<StoredVar, "key" | "category" | "value" | "hcl" | "sensitive" | "sensitiveHash">;

/** The value of a non-sensitive var as the planner sees it: HCL values parsed when they are JSON-like. */
function varValue(value: string | null, hcl: boolean): unknown {
  const text = value ?? "";
  if (!hcl) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** A default as a value: literals evaluated, expressions as their source text. */
function defaultOf(variable: VariableSummary): unknown {
  if (variable.default === null) return undefined;
  return variable.default.literal ? variable.default.value : { expression: variable.default.source };
}

/**
 * N7: effective values of the version's variables. Each is the `engine` var of that key
 * (a sensitive one by its hash), else the version's default; a required variable with no
 * var is left out.
 */
export function effectiveValues(
  summary: Pick<ModuleSummary, "variables">,
  vars: readonly EngineVarLike[],
): Record<string, EffectiveValue> {
  const engine = new Map(vars.filter((v) => v.category === "engine").map((v) => [v.key, v]));
  const out: Record<string, EffectiveValue> = {};
  for (const variable of summary.variables) {
    const given = engine.get(variable.name);
    if (given) {
      out[variable.name] = given.sensitive
        ? { sensitiveHash: given.sensitiveHash ?? "", isDefault: false }
        : { value: varValue(given.value, given.hcl), isDefault: false };
    } else if (variable.default !== null) {
      out[variable.name] = { value: defaultOf(variable), isDefault: true };
    }
  }
  return out;
}

/** Inputs of {@link buildRunConfiguration}. */
export interface RunConfigurationInput {
  noCodeModule: NoCodeModuleRow;
  /** The `ok` version to run. */
  version: Pick<RegistryModuleVersionRow, "id" | "version">;
  /** Effective values (see {@link effectiveValues}). */
  values: Record<string, EffectiveValue>;
  /** The module's variable options now. */
  options: readonly VariableOptionSet[];
  /** The workspace's stored vars now (for staleness; not necessarily the planned values). */
  storedVars: readonly Pick<StoredVar, "id" | "versionId">[];
}

/** The configuration snapshot of a new run. */
export async function buildRunConfiguration(input: RunConfigurationInput): Promise<RunConfiguration> {
  return {
    v: 1,
    noCodeModuleId: input.noCodeModule.id,
    registryModuleId: input.noCodeModule.registryModuleId,
    moduleVersionId: input.version.id,
    version: input.version.version,
    values: input.values,
    optionSetFingerprint: await optionSetFingerprint(input.options),
    moduleEnabled: input.noCodeModule.enabled,
    modulePin: input.noCodeModule.versionPin,
    workspaceVarsFingerprint: await workspaceVarsFingerprint(input.storedVars),
  };
}

/** Parse a stored configuration. */
export function parseRunConfiguration(text: string): RunConfiguration {
  return JSON.parse(text) as RunConfiguration;
}

/**
 * The ingested summary of a planned version; a RunFailure when it is gone or not `ok`.
 * Served from the per-isolate cache (../cache.ts, docs/performance.md), which keeps only `ok`
 * summaries: an `ok` version never changes again and leaves only with its registry
 * module, whose DELETE clears the cache. So the plan step of a module's runs parses each
 * version's summary once per cache period instead of reading and parsing it every time.
 */
export async function summaryOfVersion(db: Db, moduleVersionId: string): Promise<ModuleSummary> {
  const summary = await cachedNocode(
    `summary:${moduleVersionId}`,
    async () => {
      const version = (await moduleVersionByIdQuery(db, moduleVersionId))[0];
      return version ? versionSummary(version) : null;
    },
    { keep: (found: ModuleSummary | null) => found !== null },
  );
  if (!summary) throw new RunFailure(`module version ${moduleVersionId} is no longer available`);
  return summary;
}

/** The baseline a {@link workspaceBaselineQuery} row names: null when nothing was applied. */
function baselineOf(row: WorkspaceBaselineRow): RunConfiguration | null {
  if (!row.currentStateVersionId) return null;
  if (row.configuration === null) throw new RunFailure("the workspace's current state version has no applied run");
  return parseRunConfiguration(row.configuration);
}

/**
 * The configuration of the workspace's last applied run, or null when nothing was
 * applied (one D1 statement).
 */
export async function baselineConfiguration(db: Db, workspaceId: string): Promise<RunConfiguration | null> {
  const row = (await workspaceBaselineQuery(db, workspaceId))[0];
  if (!row) throw new RunFailure("the workspace no longer exists");
  return baselineOf(row);
}

/**
 * N7: plan `configuration` against the workspace's baseline. Reads the workspace's
 * baseline (one D1 statement); the version summaries come from {@link summaryOfVersion}.
 * `planner` is injectable for tests. A RunFailure when the workspace or a version is gone.
 *
 * @example
 * const plan = await planConfiguration(db, workspace.id, configuration);
 */
export async function planConfiguration(
  db: Db,
  workspaceId: string,
  configuration: RunConfiguration,
  planner: typeof planRun = planRun,
): Promise<Plan> {
  return planConfigurationFrom(db, (await workspaceBaselineQuery(db, workspaceId))[0], configuration, planner);
}

/**
 * {@link planConfiguration} on the baseline row already read (the plan step reads it in the
 * batch that claims the run; undefined when the workspace is gone).
 */
export async function planConfigurationFrom(
  db: Db,
  row: WorkspaceBaselineRow | undefined,
  configuration: RunConfiguration,
  planner: typeof planRun = planRun,
): Promise<Plan> {
  if (!row) throw new RunFailure("the workspace no longer exists");
  const proposedSummary = await summaryOfVersion(db, configuration.moduleVersionId);
  const baseline = baselineOf(row);
  const baselineSummary = baseline ? await summaryOfVersion(db, baseline.moduleVersionId) : null;
  return planner({
    baseline: baseline && baselineSummary ? { summary: baselineSummary, values: baseline.values } : null,
    proposed: { summary: proposedSummary, values: configuration.values },
  });
}
