/**
 * Runs of no-code workspaces (decisions N7, N8, N11): configuration snapshots, the queued
 * lifecycle, run actions and reads. The upgrade feature (E5–E7) uses the exports below.
 * @module
 */
export {
  baselineConfiguration,
  buildRunConfiguration,
  type EngineVarLike,
  effectiveValues,
  parseRunConfiguration,
  planConfiguration,
  type RunConfiguration,
  type RunConfigurationInput,
  RunFailure,
  sensitiveHashPurpose,
  sensitiveValueHash,
  summaryOfVersion,
} from "./configuration";
export {
  confirmRun,
  createRun,
  discardRun,
  enqueueRunPlan,
  insertRunStatements,
  type NewRunInput,
  newRunRow,
  type RunKind,
  resolveRunEngineVersion,
} from "./create";
export { defaultRunStepDeps, failRunAfterRetries, processApplyRun, processPlanRun, type RunStepDeps, type RunStepOutcome } from "./lifecycle";
export {
  findRun,
  isTerminalRunStatus,
  listWorkspaceRuns,
  NON_TERMINAL_RUN_STATUSES,
  type RunRow,
  type RunStatus,
  TERMINAL_RUN_STATUSES,
  transitionRun,
  transitionRunQuery,
} from "./repo";
export { renderRun, runRoutes } from "./routes";
export { planJsonOutput, planResource, runResource } from "./serialize";
