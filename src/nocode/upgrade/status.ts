/** E6 `GET …/upgrade/:run_id` (seed E6; decisions N8, N10): an upgrade run's current status. */
import type { Db } from "../../db/client";
import type { NocodeCaller } from "../auth";
import type { RunRow } from "../runs/repo";
import type { WorkspaceRow } from "../workspaces/repo";
import { upgradeRunOf, upgradeTarget } from "./target";

/**
 * E6: the upgrade run (404 unless it is an upgrade run of this module and workspace, the
 * caller holding `read-upgrades`).
 *
 * @example
 * const { run, workspace } = await findUpgradeRun(db, caller, moduleId, workspaceId, runId);
 */
export async function findUpgradeRun(
  db: Db,
  caller: NocodeCaller,
  noCodeModuleId: string,
  workspaceId: string,
  runId: string,
): Promise<{ workspace: WorkspaceRow; run: RunRow }> {
  const target = await upgradeTarget(db, caller, noCodeModuleId, workspaceId, "read-upgrades");
  return { workspace: target.workspace, run: await upgradeRunOf(db, target, runId) };
}
