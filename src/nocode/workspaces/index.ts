/**
 * Workspaces created from no-code modules, and their vars (seed E4; decisions N5, N6,
 * N8, N10). The upgrade feature (E5–E7) uses the exports below.
 * @module
 */
export {
  checkWorkspaceName,
  provisionableVersion,
  provisionWorkspace,
  sourceModuleIdOf,
  WORKSPACE_NAME_MAX,
  WORKSPACE_NAME_RE,
  WORKSPACE_TYPES,
} from "./create";
export { noCodeUpgradeAvailable, renderWorkspace } from "./render";
export { findWorkspace, findWorkspaceByName, findWorkspaceVar, listWorkspaceVars, type WorkspaceRow, type WorkspaceVarRow } from "./repo";
export { workspacePath, workspaceResource } from "./serialize";
export {
  checkRequiredVars,
  checkVarOptions,
  duplicateVarIndex,
  newVarRow,
  newVarVersionId,
  parseCategory,
  parseVarMembers,
  storedValue,
  type VarInput,
  varEncryptionContext,
  varResource,
} from "./vars";
export { workspaceRoutes } from "./routes";
