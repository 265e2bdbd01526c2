/**
 * E7 `POST …/upgrade/:run_id` (seed E7; decisions N8, N10, N11, N15): only a `planned`,
 * fresh upgrade run; switches the workspace to the planned version, option-set
 * fingerprint and vars, moves the run `planned → confirmed → apply_queued` in the same D1
 * batch, then queues the apply of that same run (the Queue consumer's `apply-run` step,
 * idempotent by run id).
 */
import type { Db } from "../../db/client";
import { isUniqueViolation } from "../../db/unique";
import { conflict, notFound } from "../errors";
import { applyRunMessage } from "../messages/provision";
import { noCodeModuleVersionId } from "../no-code-modules/fingerprint";
import { sourceModuleIdOf } from "../no-code-modules/provisionable";
import type { NoCodeModuleRow } from "../no-code-modules/repo";
import { findModuleVersionById, findRegistryModuleById } from "../registry/repo";
import { notifyRolloutOfRun } from "../rollout-hooks";
import { parseRunConfiguration } from "../runs/configuration";
import { findRun, type RunRow } from "../runs/repo";
import { listWorkspaceVars, type WorkspaceRow } from "../workspaces/repo";
import type { UpgradeDeps } from "./deps";
import { confirmUpgradeStatements, undoConfirmStatements } from "./repo";
import { upgradeStaleness } from "./staleness";
import { findUpgradeTarget, upgradeRunOf } from "./target";
import type { UpgradeRunConfiguration } from "./vars";

/**
 * E7 on a module and workspace whose organization's rights the route checked
 * (`run-workspaces`). Throws 404 for anything but an upgrade run of this module and workspace, 409 when it is not `planned` or its plan is stale (N8); on
 * success the workspace runs the new version and vars and the apply of the run is queued.
 *
 * @example
 * await confirmUpgrade(c.var.db, moduleId, workspaceId, runId, defaultUpgradeDeps(c.env));
 */
export async function confirmUpgrade(
  db: Db,
  noCodeModuleId: string,
  workspaceId: string,
  runId: string,
  deps: UpgradeDeps,
): Promise<void> {
  const target = await findUpgradeTarget(db, noCodeModuleId, workspaceId);
  if (!target) throw notFound();
  const run = await upgradeRunOf(db, target, runId);
  await confirmUpgradeRun(db, target.module, target.workspace, run, deps);
  // N15: a rollout's planned run confirmed by hand counts as confirmed; let the rollout know.
  await notifyRolloutOfRun(db, run.id, deps.send);
}

/**
 * E7's work once the run is known to be an upgrade run of this module and workspace:
 * also what a rollout does to confirm a plan (N15). Throws 409 when the run is not
 * `planned` or is stale.
 */
export async function confirmUpgradeRun(
  db: Db,
  module: NoCodeModuleRow,
  workspace: WorkspaceRow,
  run: RunRow,
  deps: UpgradeDeps,
): Promise<void> {
  const notAwaiting = (status: string) => conflict(`The upgrade run is ${status}, not awaiting confirmation`);
  if (run.status !== "planned") throw notAwaiting(run.status);
  const configuration = parseRunConfiguration(run.configuration) as UpgradeRunConfiguration;
  const reasons = await upgradeStaleness(db, run, configuration, workspace);
  if (reasons.length > 0)
    throw conflict(`The upgrade plan is stale: ${reasons.join("; ")}. Start a new upgrade to plan again.`);

  const [version, registryModule, before] = await Promise.all([
    findModuleVersionById(db, configuration.moduleVersionId),
    findRegistryModuleById(db, configuration.registryModuleId),
    listWorkspaceVars(db, workspace.id),
  ]);
  if (!version || !registryModule)
    throw conflict(
      "The upgrade plan is stale: the planned module version no longer exists. Start a new upgrade to plan again.",
    );
  const changes = configuration.varChanges ?? [];

  // One D1 batch (a transaction): see confirmUpgradeStatements. The token, not the time,
  // tells this request's move from a concurrent E7's (workerd's clock can read the same).
  const at = deps.now();
  const token = crypto.randomUUID();
  const set = {
    noCodeVersionId: version.id,
    noCodeVersion: version.version,
    sourceModuleId: sourceModuleIdOf(registryModule, version.version),
    noCodeModuleVersionId: await noCodeModuleVersionId(module.id, version.version),
    optionSetFingerprint: configuration.optionSetFingerprint,
    currentConfigurationVersionId: run.configurationVersionId,
    currentRunId: run.id,
    updatedAt: at,
  };
  try {
    await db.batch(confirmUpgradeStatements(db, run, workspace.id, set, changes, at, token));
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    // A concurrent E7 that confirmed the run first wrote the same new vars; otherwise a var
    // of the same key was created in the meantime (the plan is stale by then).
    const current = await findRun(db, run.id);
    if (current?.status !== "planned") throw notAwaiting(current?.status ?? "gone");
    throw conflict("The upgrade plan is stale: a workspace variable changed. Start a new upgrade to plan again.");
  }
  const after = await findRun(db, run.id);
  if (after?.status !== "apply_queued" || after.transitionToken !== token) throw notAwaiting(after?.status ?? "gone");

  try {
    await deps.send(applyRunMessage(run.id));
  } catch (err) {
    // The apply could not be queued: put everything back so E7 can be retried.
    await db.batch(undoConfirmStatements(db, run, workspace, before, changes, token));
    throw err;
  }
}
