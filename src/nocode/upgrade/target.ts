/**
 * What E5–E7 act on (decisions N8, N10): a no-code module and one of its workspaces, the
 * caller holding the right the step needs; for E6 and E7 also one of the workspace's
 * upgrade runs. Everything not permitted or not found is 404.
 */
import type { Db } from "../../db/client";
import type { NocodeCaller } from "../auth";
import { notFound } from "../errors";
import { findNoCodeModule, type NoCodeModuleRow } from "../no-code-modules/repo";
import { requireOrgPermission } from "../permissions";
import { findRun, type RunRow } from "../runs/repo";
import { findWorkspace, type WorkspaceRow } from "../workspaces/repo";

/** The module and workspace an upgrade step acts on. */
export interface UpgradeTarget {
  module: NoCodeModuleRow;
  workspace: WorkspaceRow;
}

/** The no-code module and one of its workspaces, the caller holding `permission` (N10); 404 otherwise. */
export async function upgradeTarget(
  db: Db,
  caller: NocodeCaller,
  noCodeModuleId: string,
  workspaceId: string,
  permission: "run-workspaces" | "read-upgrades",
): Promise<UpgradeTarget> {
  const module = await findNoCodeModule(db, noCodeModuleId);
  if (!module) throw notFound();
  await requireOrgPermission(db, caller, module.organization, permission);
  const workspace = await findWorkspace(db, workspaceId);
  // A workspace not created from this module is not one of its workspaces: 404.
  if (!workspace || workspace.organization !== module.organization || workspace.noCodeModuleId !== module.id)
    throw notFound();
  return { module, workspace };
}

/** The upgrade run `runId` of this module and workspace; 404 for any other run (N8). */
export async function upgradeRunOf(db: Db, { module, workspace }: UpgradeTarget, runId: string): Promise<RunRow> {
  const run = await findRun(db, runId);
  if (run?.kind !== "upgrade" || run.workspaceId !== workspace.id || run.noCodeModuleId !== module.id) throw notFound();
  return run;
}
