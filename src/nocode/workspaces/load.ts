/**
 * Loading what a workspace document shows besides its row: the caller's rights (N10),
 * its vars, and whether a no-code upgrade is available (N8).
 */
import type { Db } from "../../db/client";
import type { OrgPermission } from "../access/permissions";
import { optionSetFingerprint } from "../no-code-modules/fingerprint";
import { findNoCodeModule, listVariableOptions } from "../no-code-modules/repo";
import { findLockingRun } from "../runs/repo";
import type { ProvisionedWorkspace } from "./create";
import { listWorkspaceVars, type WorkspaceRow } from "./repo";
import { workspaceResource } from "./serialize";

/**
 * N8: `no-code-upgrade-available` is true when the no-code module's pin differs from the
 * version the workspace runs, or its option sets differ from those recorded at the last
 * E4/E7. False when the workspace has no no-code module (any more) or the module has no pin.
 */
export async function noCodeUpgradeAvailable(
  db: Db,
  ws: Pick<WorkspaceRow, "noCodeModuleId" | "noCodeVersion" | "optionSetFingerprint">,
): Promise<boolean> {
  if (!ws.noCodeModuleId) return false;
  const module = await findNoCodeModule(db, ws.noCodeModuleId);
  if (!module || module.versionPin === null) return false;
  if (module.versionPin !== ws.noCodeVersion) return true;
  return (await optionSetFingerprint(await listVariableOptions(db, module.id))) !== ws.optionSetFingerprint;
}

/** Load the workspace resource as a caller holding `rights` in its organization sees it. */
export async function loadWorkspaceResource(db: Db, rights: ReadonlySet<OrgPermission>, ws: WorkspaceRow) {
  const [vars, upgrade, lockingRun] = await Promise.all([
    listWorkspaceVars(db, ws.id),
    noCodeUpgradeAvailable(db, ws),
    findLockingRun(db, ws.id),
  ]);
  return workspaceResource(ws, {
    rights,
    varIds: vars.map((v) => v.id),
    noCodeUpgradeAvailable: upgrade,
    lockingRunId: lockingRun?.id ?? null,
  });
}

/**
 * The resource of a workspace E4 has just written, from what E4 knows: its vars are the
 * ones it wrote, and no upgrade is available, since E4 provisioned the module's pin with
 * the option sets it read in the same request (N8's two comparisons are equal by
 * construction). `rights` are the caller's, as E4's rights check loaded them.
 */
export function provisionedWorkspaceResource(rights: ReadonlySet<OrgPermission>, created: ProvisionedWorkspace) {
  // listWorkspaceVars' order: creation time, then id (E4's vars share one creation time).
  const varIds = [...created.vars]
    .sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((v) => v.id);
  return workspaceResource(created.workspace, { rights, varIds, noCodeUpgradeAvailable: false });
}
