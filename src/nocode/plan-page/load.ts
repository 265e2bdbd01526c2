/**
 * Loading a plan page (decision N8) from D1: the run of a workspace, its plan, the
 * versions from → to, and the variables that changed, for any run (upgrade runs of E5
 * and the runs of the queued lifecycle alike).
 *
 * The baseline a run was planned against (N7: the configuration of the last applied
 * run) is found again as the workspace's newest state version recorded before the run
 * was planned; runs are serialised per workspace, so that is the one the planner read.
 */
import { and, desc, eq, lte, ne } from "drizzle-orm";
import type { Db } from "../../db/client";
import { stateVersions } from "../../db/schema/nocode";
import type { ModuleSummary } from "../../lib/terraform/types";
import type { Plan } from "../planner";
import { findModuleVersionById, findRegistryModuleById, versionSummary } from "../registry/repo";
import { parseRunConfiguration, type RunConfiguration } from "../runs/configuration";
import { findRun, type RunRow } from "../runs/repo";
import { executionDetailsOf } from "../runs/serialize";
import { findWorkspaceByName, type WorkspaceRow } from "../workspaces/repo";
import { loadEnginePlan } from "./engine-plan";
import { describeChangedVariables, type PlanPageModel } from "./model";

/** A run of a workspace, addressed as the page's path addresses it. */
export interface PlanPageTarget {
  workspace: WorkspaceRow;
  run: RunRow;
}

/** The run `runId` of workspace `<organization>/<name>`, or null when either is unknown or they do not belong together. */
export async function findPlanPageTarget(
  db: Db,
  organization: string,
  name: string,
  runId: string,
): Promise<PlanPageTarget | null> {
  const [workspace, run] = await Promise.all([findWorkspaceByName(db, organization, name), findRun(db, runId)]);
  if (!workspace || !run || run.workspaceId !== workspace.id) return null;
  return { workspace, run };
}

/** When the run was planned (ms): its `planned-at` (or `planned-and-finished-at`) stamp. */
export function plannedAt(run: Pick<RunRow, "statusTimestamps" | "updatedAt">): number {
  const stamps = JSON.parse(run.statusTimestamps) as Record<string, string>;
  const text = stamps["planned-at"] ?? stamps["planned-and-finished-at"];
  const ms = text ? Date.parse(text) : Number.NaN;
  return Number.isFinite(ms) ? ms : run.updatedAt;
}

async function summaryOf(db: Db, moduleVersionId: string): Promise<ModuleSummary | null> {
  const version = await findModuleVersionById(db, moduleVersionId);
  return version ? versionSummary(version) : null;
}

/** The configuration of the run whose apply was the workspace's newest before `at`, or null. */
async function baselineBefore(db: Db, run: RunRow, at: number): Promise<RunConfiguration | null> {
  const state = await db
    .select()
    .from(stateVersions)
    .where(
      and(
        eq(stateVersions.workspaceId, run.workspaceId),
        ne(stateVersions.runId, run.id),
        lte(stateVersions.createdAt, at),
      ),
    )
    .orderBy(desc(stateVersions.serial))
    .limit(1)
    .get();
  const applied = state ? await findRun(db, state.runId) : undefined;
  return applied ? parseRunConfiguration(applied.configuration) : null;
}

/** N19: who made the run's plan, from its `execution-details`. */
function executionOf(run: RunRow): PlanPageModel["execution"] {
  if (run.executionMode !== "agent") return { mode: "remote" };
  const details = executionDetailsOf(run);
  const execution: PlanPageModel["execution"] = { mode: "agent" };
  if (details["agent-name"]) execution.agentName = details["agent-name"];
  if (details["agent-pool-name"]) execution.poolName = details["agent-pool-name"];
  if (details["engine-name"]) execution.engineName = details["engine-name"];
  if (details["engine-version"]) execution.engineVersion = details["engine-version"];
  return execution;
}

/**
 * The page model of a run, or null while the run has no plan yet. With `runData`, an agent
 * run's model carries the engine's changes from its JSON plan (N19), read from R2.
 *
 * @example
 * const model = await loadPlanPageModel(db, target, c.env);
 */
export async function loadPlanPageModel(
  db: Db,
  { workspace, run }: PlanPageTarget,
  runData?: Pick<Env, "RUN_DATA" | "KEYWAY_KEK">,
): Promise<PlanPageModel | null> {
  if (!run.plan) return null;
  const plan = JSON.parse(run.plan) as Plan;
  const configuration = parseRunConfiguration(run.configuration);
  const baseline = await baselineBefore(db, run, plannedAt(run));
  const [registryModule, proposedSummary, baselineSummary, engine] = await Promise.all([
    findRegistryModuleById(db, configuration.registryModuleId),
    summaryOf(db, configuration.moduleVersionId),
    baseline ? summaryOf(db, baseline.moduleVersionId) : Promise.resolve(null),
    runData && run.executionMode === "agent" ? loadEnginePlan(runData, db, run) : Promise.resolve(undefined),
  ]);
  const model: PlanPageModel = {
    runId: run.id,
    kind: run.kind,
    status: run.status,
    organization: workspace.organization,
    workspace: workspace.name,
    module: registryModule
      ? `private/${registryModule.namespace}/${registryModule.name}/${registryModule.provider}`
      : `(deleted module ${configuration.registryModuleId})`,
    fromVersion: baseline?.version ?? null,
    toVersion: configuration.version,
    createdAt: run.createdAt,
    additions: plan.additions,
    changes: plan.changes,
    destructions: plan.destructions,
    resourceChanges: plan.resourceChanges,
    changedVariables: describeChangedVariables(
      baseline ? { values: baseline.values, summary: baselineSummary } : null,
      { values: configuration.values, summary: proposedSummary },
    ),
    execution: executionOf(run),
  };
  if (engine) model.engine = engine;
  return model;
}
