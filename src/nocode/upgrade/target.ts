/**
 * What E5–E7 act on (decisions N8, N10): a no-code module and one of its workspaces; for
 * E6 and E7 also one of the workspace's upgrade runs. Everything not found is 404, and
 * the routes' rights (../route-rights.ts) make everything not permitted 404 too.
 */
import type { Db } from "../../db/client";
import { notFound } from "../errors";
import { findNoCodeModule, type NoCodeModuleRow } from "../no-code-modules/repo";
import { scope } from "../route-rights";
import { findRun, type RunRow } from "../runs/repo";
import { findWorkspace, type WorkspaceRow } from "../workspaces/repo";

/** The module and workspace an upgrade step acts on. */
export interface UpgradeTarget {
  module: NoCodeModuleRow;
  workspace: WorkspaceRow;
}

/** The no-code module and one of its workspaces; undefined when either is missing or the workspace is not the module's. */
export async function findUpgradeTarget(
  db: Db,
  noCodeModuleId: string,
  workspaceId: string,
): Promise<UpgradeTarget | undefined> {
  const module = await findNoCodeModule(db, noCodeModuleId);
  if (!module) return undefined;
  const workspace = await findWorkspace(db, workspaceId);
  // A workspace not created from this module is not one of its workspaces: 404.
  if (!workspace || workspace.organization !== module.organization || workspace.noCodeModuleId !== module.id)
    return undefined;
  return { module, workspace };
}

/** The target of E5–E7, `:id` and `:workspace_id`: the module's organization's rights decide (N10). */
export const upgradeTargetOfPath = scope(async (c) => {
  const target = await findUpgradeTarget(c.var.db, c.req.param("id") ?? "", c.req.param("workspace_id") ?? "");
  return target && { resource: target, organization: target.module.organization };
});

/** The upgrade run `runId` of this module and workspace; 404 for any other run (N8). */
export async function upgradeRunOf(db: Db, { module, workspace }: UpgradeTarget, runId: string): Promise<RunRow> {
  const run = await findRun(db, runId);
  if (run?.kind !== "upgrade" || run.workspaceId !== workspace.id || run.noCodeModuleId !== module.id) throw notFound();
  return run;
}
