/**
 * N8: an upgrade plan is stale when the module's pin, option sets or `enabled`, or any
 * workspace var, changed after the plan was made. A stale plan cannot be confirmed (E7 →
 * 409), and E5 discards it to plan afresh.
 *
 * Compared by value against the snapshot the run recorded at E5 (RunConfiguration:
 * `modulePin`, `moduleEnabled`, `optionSetFingerprint`, `workspaceVarsFingerprint`), so a
 * write that sets the same value again does not make a plan stale, while any var write
 * does (every var write gives the var a new `version-id`). Two more checks guard what a
 * plan also rests on: the registry module behind the no-code module, and the baseline
 * (no other run applied since the plan).
 *
 * N19: the plan was made when the run reached `planned`. A remote upgrade run is created
 * `planned`; an agent's plan reads the workspace's state when it runs, so a state recorded
 * between E5 and `planned` (an owner's upload, N20) is part of the plan, and only a state
 * recorded after `planned-at` makes it stale. The other checks compare values with the
 * snapshot E5 recorded (the variables the agent was given), so a change at any time after
 * E5 makes the plan stale.
 */
import type { Db } from "../../db/client";
import { optionSetFingerprint, workspaceVarsFingerprint } from "../no-code-modules/fingerprint";
import { findNoCodeModule, listVariableOptions } from "../no-code-modules/repo";
import type { RunConfiguration } from "../runs/configuration";
import { findStateVersion, type RunRow, statusTimestampKey } from "../runs/repo";
import { listWorkspaceVars, type WorkspaceRow } from "../workspaces/repo";

/**
 * Why the plan of `run` is stale, in words a person can act on; empty when it is not.
 *
 * @example
 * const reasons = await upgradeStaleness(db, run, configuration, workspace);
 * if (reasons.length > 0) throw conflict(`The upgrade plan is stale: ${reasons.join("; ")}`);
 */
export async function upgradeStaleness(
  db: Db,
  run: Pick<RunRow, "createdAt" | "statusTimestamps">,
  configuration: RunConfiguration,
  workspace: Pick<WorkspaceRow, "id" | "currentStateVersionId">,
): Promise<string[]> {
  const module = await findNoCodeModule(db, configuration.noCodeModuleId);
  if (!module) return ["the no-code module was deleted"];
  const reasons: string[] = [];
  if (module.registryModuleId !== configuration.registryModuleId)
    reasons.push("the no-code module now uses another registry module");
  if (module.versionPin !== configuration.modulePin) {
    reasons.push(
      `the module's version pin changed from ${configuration.modulePin ?? "none"} to ${module.versionPin ?? "none"}`,
    );
  }
  if (module.enabled !== configuration.moduleEnabled)
    reasons.push(module.enabled ? "the module was enabled" : "the module was disabled");
  const [options, vars, state] = await Promise.all([
    listVariableOptions(db, module.id),
    listWorkspaceVars(db, workspace.id),
    workspace.currentStateVersionId
      ? findStateVersion(db, workspace.currentStateVersionId)
      : Promise.resolve(undefined),
  ]);
  if ((await optionSetFingerprint(options)) !== configuration.optionSetFingerprint)
    reasons.push("the module's variable options changed");
  if ((await workspaceVarsFingerprint(vars)) !== configuration.workspaceVarsFingerprint)
    reasons.push("a workspace variable changed");
  if (state && state.createdAt > plannedAt(run)) reasons.push("another run was applied to the workspace");
  return reasons;
}

/**
 * N19: when the run reached `planned` (its `planned-at`), in epoch milliseconds; for a run
 * not yet planned, now (nothing recorded so far is after its plan).
 */
export function plannedAt(run: Pick<RunRow, "createdAt" | "statusTimestamps">, now = Date.now()): number {
  let planned: unknown;
  try {
    planned = (JSON.parse(run.statusTimestamps) as Record<string, unknown>)[statusTimestampKey("planned")];
  } catch {
    return run.createdAt;
  }
  const at = typeof planned === "string" ? Date.parse(planned) : Number.NaN;
  return Number.isNaN(at) ? now : at;
}
