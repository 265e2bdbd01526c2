/**
 * What a run plans (decisions N7, N8): the configuration snapshot stored on each run, the
 * effective variable values the planner compares, and the plan of a configuration
 * against the workspace's baseline.
 *
 * - Effective value of a module variable: the workspace's `engine` var, else the
 *   version's default (N7). Sensitive values are represented only by their keyed hash
 *   `keyedHash(KEYWAY_HASH_KEY, "nocode-sensitive:<workspace id>:<key>", value)` (B2).
 * - Baseline: the configuration of the last applied run (the run that recorded the
 *   workspace's current state version), or empty.
 */
import type { Db } from "../../db/client";
import { keyedHash } from "../../lib/crypto/hmac";
import type { ModuleSummary, VariableSummary } from "../../lib/terraform/types";
import { optionSetFingerprint, workspaceVarsFingerprint } from "../no-code-modules/fingerprint";
import type { NoCodeModuleRow, VariableOptionSet } from "../no-code-modules/repo";
import { type EffectiveValue, type Plan, planRun } from "../planner";
import { findModuleVersionById, type RegistryModuleVersionRow, versionSummary } from "../registry/repo";
import type { WorkspaceRow, WorkspaceVarRow } from "../workspaces/repo";
import { findRun, findStateVersion } from "./repo";

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

/** Purpose string of the keyed hash of a sensitive value (the planner compares these). */
export function sensitiveHashPurpose(workspaceId: string, key: string): string {
  return `nocode-sensitive:${workspaceId}:${key}`;
}

/** The keyed hash the planner compares instead of a sensitive value (B2, N7). */
export function sensitiveValueHash(env: Pick<Env, "KEYWAY_HASH_KEY">, workspaceId: string, key: string, value: string): Promise<string> {
  return keyedHash(env.KEYWAY_HASH_KEY, sensitiveHashPurpose(workspaceId, key), value);
}

/** What the effective values need of a workspace variable (a stored row fits). */
export type EngineVarLike = Pick<WorkspaceVarRow, "key" | "category" | "value" | "hcl" | "sensitive" | "sensitiveHash">;

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
export function effectiveValues(summary: Pick<ModuleSummary, "variables">, vars: readonly EngineVarLike[]): Record<string, EffectiveValue> {
  const engine = new Map(vars.filter((v) => v.category === "engine").map((v) => [v.key, v]));
  const out: Record<string, EffectiveValue> = {};
  for (const variable of summary.variables) {
    const given = engine.get(variable.name);
    if (given) {
      out[variable.name] =
        given.sensitive ? { sensitiveHash: given.sensitiveHash ?? "", isDefault: false } : { value: varValue(given.value, given.hcl), isDefault: false };
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
  storedVars: readonly Pick<WorkspaceVarRow, "id" | "versionId">[];
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

/** The ingested summary of a planned version; a RunFailure when it is gone or not `ok`. */
export async function summaryOfVersion(db: Db, moduleVersionId: string): Promise<ModuleSummary> {
  const version = await findModuleVersionById(db, moduleVersionId);
  const summary = version ? versionSummary(version) : null;
  if (!summary) throw new RunFailure(`module version ${moduleVersionId} is no longer available`);
  return summary;
}

/** The configuration of the workspace's last applied run, or null when nothing was applied. */
export async function baselineConfiguration(db: Db, workspace: Pick<WorkspaceRow, "currentStateVersionId">): Promise<RunConfiguration | null> {
  if (!workspace.currentStateVersionId) return null;
  const state = await findStateVersion(db, workspace.currentStateVersionId);
  const run = state ? await findRun(db, state.runId) : undefined;
  if (!run) throw new RunFailure("the workspace's current state version has no applied run");
  return parseRunConfiguration(run.configuration);
}

/**
 * N7: plan `configuration` against the workspace's baseline. Pure apart from the reads;
 * `planner` is injectable for tests.
 *
 * @example
 * const plan = await planConfiguration(db, workspace, configuration);
 */
export async function planConfiguration(
  db: Db,
  workspace: Pick<WorkspaceRow, "currentStateVersionId">,
  configuration: RunConfiguration,
  planner: typeof planRun = planRun,
): Promise<Plan> {
  const proposedSummary = await summaryOfVersion(db, configuration.moduleVersionId);
  const baseline = await baselineConfiguration(db, workspace);
  const baselineSummary = baseline ? await summaryOfVersion(db, baseline.moduleVersionId) : null;
  return planner({
    baseline: baseline && baselineSummary ? { summary: baselineSummary, values: baseline.values } : null,
    proposed: { summary: proposedSummary, values: configuration.values },
  });
}
