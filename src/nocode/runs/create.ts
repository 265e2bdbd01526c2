/**
 * Creating, confirming and discarding runs (decisions N6, N7, N8). The upgrade feature
 * (E5–E7) creates its runs here too: `createRun` with `kind: "upgrade"` and, since E5
 * plans synchronously, a `planned` result; E7 then calls `confirmRun`.
 */
import type { Db } from "../../db/client";
import { logError } from "../../lib/log";
import { queueAgentJob } from "../agent-pools/job-queue";
import { newId } from "../ids";
import { applyRunMessage, planRunMessage } from "../messages/provision";
import type { Plan } from "../planner";
import { requireEngineVersion } from "../releases/resolve";
import { isoTime } from "../respond";
import type { RunConfiguration } from "./configuration";
import { errorRun } from "./lifecycle";
import {
  discardPlannedRunStatements,
  insertLatestRunStatements,
  type RunRow,
  type RunStatus,
  statusTimestampKey,
  transitionRun,
} from "./repo";

/** `plan-and-apply`: E4's first run and ordinary runs; `upgrade`: E5 (waits at `planned` for E7). */
export type RunKind = RunRow["kind"];

/** Inputs of {@link createRun}. */
export interface NewRunInput {
  /** The workspace the run belongs to (a new run keeps its configuration version, or gets one). */
  workspace: {
    id: string;
    organization: string;
    currentConfigurationVersionId: string | null;
    /** N19: an `agent` workspace's runs are executed by its pool's agents (default `remote`). */
    executionMode?: RunRow["executionMode"];
  };
  kind: RunKind;
  configuration: RunConfiguration;
  /** The concrete engine release (see {@link resolveRunEngineVersion}). */
  engineVersion: string;
  autoApply: boolean;
  message?: string | null;
  /**
   * A run planned synchronously (E5): its plan and the status it is created in. Absent:
   * the run is `pending` and needs {@link enqueueRunPlan}.
   */
  planned?: { plan: Plan; status: Extract<RunStatus, "planned" | "planned_and_finished"> };
  /** N18: the run's variables for its agent, sealed (../agents/inputs.ts); null for remote runs. */
  agentInputs?: string | null;
}

/** The row of a new run (not stored). */
export function newRunRow(input: NewRunInput, now = Date.now(), id = newId("run")): RunRow {
  const statuses: RunStatus[] = input.planned
    ? ["pending", "plan_queued", "planning", input.planned.status]
    : ["pending"];
  const timestamps: Record<string, string> = {};
  for (const s of statuses) timestamps[statusTimestampKey(s)] = isoTime(now);
  return {
    id,
    workspaceId: input.workspace.id,
    organization: input.workspace.organization,
    kind: input.kind,
    noCodeModuleId: input.configuration.noCodeModuleId,
    moduleVersionId: input.configuration.moduleVersionId,
    moduleVersion: input.configuration.version,
    configuration: JSON.stringify(input.configuration),
    configurationVersionId: input.workspace.currentConfigurationVersionId ?? newId("cv"),
    engineVersion: input.engineVersion,
    planId: newId("plan"),
    plan: input.planned ? JSON.stringify(input.planned.plan) : null,
    status: statuses[statuses.length - 1]!,
    statusTimestamps: JSON.stringify(timestamps),
    autoApply: input.autoApply,
    message: input.message ?? null,
    error: null,
    stateVersionId: null,
    transitionToken: null,
    executionMode: input.workspace.executionMode ?? "remote",
    executionDetails: null,
    statusReason: null,
    agentInputs: input.agentInputs ?? null,
    createdAt: now,
    updatedAt: now,
    cancelRequestedAt: null,
  };
}

/**
 * Store a new run as the workspace's latest. A `pending` run still needs
 * {@link enqueueRunPlan}.
 *
 * @example
 * const run = await createRun(db, { workspace, kind: "upgrade", configuration, engineVersion, autoApply: false, planned: { plan, status: "planned" } });
 */
export async function createRun(db: Db, input: NewRunInput, now = Date.now()): Promise<RunRow> {
  const row = newRunRow(input, now);
  await db.batch(insertLatestRunStatements(db, row));
  return row;
}

/** N6: the release a workspace's next run uses (its constraint resolved now); 422 when none. */
export async function resolveRunEngineVersion(db: Db, workspace: { engineVersion: string }): Promise<string> {
  return (await requireEngineVersion(db, workspace.engineVersion)).version;
}

/**
 * Queue the plan of a `pending` run (N7, N11: the message carries the id only). If the
 * queue refuses, the run becomes `errored` (it could never start) and false is returned.
 * N19: an agent run's plan is a job for its pool's agents instead, queued at once (no
 * Queue hop, so a waiting agent receives it within a second of this commit).
 */
export async function enqueueRunPlan(
  env: Pick<Env, "PROVISION_QUEUE" | "AGENT_POOLS">,
  db: Db,
  run: Pick<RunRow, "id" | "executionMode">,
  requestId = "",
): Promise<boolean> {
  const runId = run.id;
  if (run.executionMode === "agent") return queueAgentJob(env, db, runId, "plan", Date.now(), requestId);
  try {
    await env.PROVISION_QUEUE.send(planRunMessage(runId), { contentType: "json" });
    return true;
  } catch (err) {
    logError(requestId, "could not queue the plan of a run", err);
    await errorRun(db, runId, "the run could not be queued", ["pending"]);
    return false;
  }
}

/**
 * Confirm a `planned` run and queue its apply (N7 run action `apply`; E7 for upgrade
 * runs): `planned → confirmed → apply_queued`. Returns false when the run was not
 * `planned` (409 for the caller). When the queue refuses, the run goes back to `planned`
 * (so it can be confirmed again) and the error is thrown.
 */
export async function confirmRun(
  env: Pick<Env, "PROVISION_QUEUE">,
  db: Db,
  runId: string,
  now = Date.now(),
): Promise<boolean> {
  if (!(await transitionRun(db, runId, ["planned"], ["confirmed", "apply_queued"], now))) return false;
  try {
    await env.PROVISION_QUEUE.send(applyRunMessage(runId), { contentType: "json" });
  } catch (err) {
    await transitionRun(db, runId, ["apply_queued"], ["planned"], Date.now());
    throw err;
  }
  return true;
}

/**
 * Discard a `planned` run (N7 run action `discard`); false when it was not `planned`. An
 * upgrade run's pending variable changes (kept, encrypted, until E7) go with it.
 */
export async function discardRun(db: Db, runId: string, now = Date.now()): Promise<boolean> {
  const [discarded] = await db.batch(discardPlannedRunStatements(db, runId, now));
  return discarded.length > 0;
}
