/**
 * Loading what a workspace document shows besides its row: the caller's rights (N10),
 * its vars, and whether a no-code upgrade is available (N8).
 */
import type { Db } from "../../db/client";
import type { NocodeCaller } from "../auth";
import { optionSetFingerprint } from "../no-code-modules/fingerprint";
import { findNoCodeModule, listVariableOptions } from "../no-code-modules/repo";
import { orgCallerPermissions } from "../permissions";
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

/** The workspace resource as `caller` sees it. */
export async function renderWorkspace(db: Db, caller: NocodeCaller, ws: WorkspaceRow) {
  const [rights, vars, upgrade] = await Promise.all([
    orgCallerPermissions(db, caller, ws.organization),
    listWorkspaceVars(db, ws.id),
    noCodeUpgradeAvailable(db, ws),
  ]);
  return workspaceResource(ws, { rights, varIds: vars.map((v) => v.id), noCodeUpgradeAvailable: upgrade });
}
