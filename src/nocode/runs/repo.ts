/**
 * D1 access for runs and state versions (decision N7), with the run state machine's
 * conditional transitions: every status change is `UPDATE runs SET status = ? WHERE id = ?
 * AND status IN (…)`, and the caller checks whether it changed a row. That is what makes
 * the Queue handlers idempotent by run id (N11): a redelivered message finds the run
 * already moved on and does nothing.
 */
import { and, desc, eq, inArray, type SQL, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { runs, stateVersions } from "../../db/schema";
import { isoTime } from "../respond";

/** A run row. */
export type RunRow = typeof runs.$inferSelect;
/** A state version row. */
export type StateVersionRow = typeof stateVersions.$inferSelect;

/** HCP Terraform's run states that this service uses (N7; reference §6). */
export type RunStatus =
  | "pending"
  | "plan_queued"
  | "planning"
  | "planned"
  | "confirmed"
  | "apply_queued"
  | "applying"
  | "applied"
  | "planned_and_finished"
  | "discarded"
  | "errored"
  | "canceled";

/** N8: terminal states. */
export const TERMINAL_RUN_STATUSES: readonly RunStatus[] = ["applied", "planned_and_finished", "errored", "discarded", "canceled"];

/** Every state a run can leave. */
export const NON_TERMINAL_RUN_STATUSES: readonly RunStatus[] = [
  "pending",
  "plan_queued",
  "planning",
  "planned",
  "confirmed",
  "apply_queued",
  "applying",
];

/**
 * The `status-timestamps` key of a status, as HCP Terraform names them
 * (`planned-at`, `apply-queued-at`, …; a new run is `plan-queueable-at`).
 */
export function statusTimestampKey(status: RunStatus): string {
  return status === "pending" ? "plan-queueable-at" : `${status.replaceAll("_", "-")}-at`;
}

/** SQL that adds `<status>-at = at` to the stored timestamps for each of `statuses`. */
function stampSql(statuses: readonly RunStatus[], at: number): SQL {
  let expr: SQL = sql`${runs.statusTimestamps}`;
  for (const status of statuses) expr = sql`json_set(${expr}, ${`$."${statusTimestampKey(status)}"`}, ${isoTime(at)})`;
  return expr;
}

/** A run by id. */
export function findRun(db: Db, id: string): Promise<RunRow | undefined> {
  return db.select().from(runs).where(eq(runs.id, id)).get();
}

/** A run of the workspace that has not ended (at most one exists: N7 refuses a second), if any. */
export function findActiveRun(db: Db, workspaceId: string): Promise<Pick<RunRow, "id" | "status" | "kind"> | undefined> {
  return db
    .select({ id: runs.id, status: runs.status, kind: runs.kind })
    .from(runs)
    .where(and(eq(runs.workspaceId, workspaceId), inArray(runs.status, [...NON_TERMINAL_RUN_STATUSES])))
    .get();
}

/** A run by its plan's id. */
export function findRunByPlanId(db: Db, planId: string): Promise<RunRow | undefined> {
  return db.select().from(runs).where(eq(runs.planId, planId)).get();
}

/** The runs of a workspace, newest first. */
export function listWorkspaceRuns(db: Db, workspaceId: string, limit = 100): Promise<RunRow[]> {
  return db.select().from(runs).where(eq(runs.workspaceId, workspaceId)).orderBy(desc(runs.createdAt), desc(runs.id)).limit(limit).all();
}

/** Columns a transition may set besides status, timestamps and updated_at. */
export type RunTransitionSet = Partial<Pick<RunRow, "plan" | "error" | "stateVersionId" | "message">>;

/**
 * The conditional UPDATE of a transition: from any of `from` to the last of `through`,
 * stamping every status in `through` (so `planning → planned → confirmed → apply_queued`
 * records each time). Not executed: batch it or await `.returning().get()`.
 */
export function transitionRunQuery(
  db: Db,
  runId: string,
  from: readonly RunStatus[],
  through: readonly [RunStatus, ...RunStatus[]],
  at: number,
  set: RunTransitionSet = {},
) {
  const to = through[through.length - 1]!;
  return db
    .update(runs)
    .set({ ...set, status: to, statusTimestamps: stampSql(through, at), updatedAt: at })
    .where(and(eq(runs.id, runId), inArray(runs.status, [...from])));
}

/**
 * Move a run from one of `from` through `through` (see {@link transitionRunQuery});
 * returns whether this call made the change (false: the run was not in `from`).
 *
 * @example
 * if (!(await transitionRun(db, run.id, ["planned"], ["confirmed", "apply_queued"], Date.now()))) throw conflict("…");
 */
export async function transitionRun(
  db: Db,
  runId: string,
  from: readonly RunStatus[],
  through: readonly [RunStatus, ...RunStatus[]],
  at: number,
  set: RunTransitionSet = {},
): Promise<boolean> {
  const row = await transitionRunQuery(db, runId, from, through, at, set).returning({ id: runs.id }).get();
  return row !== undefined;
}

/** A state version by id. */
export function findStateVersion(db: Db, id: string): Promise<StateVersionRow | undefined> {
  return db.select().from(stateVersions).where(eq(stateVersions.id, id)).get();
}

/**
 * A run's stored configuration without the pending variable changes an upgrade keeps
 * (encrypted) until E7 — for a confirmed or discarded run (N8).
 */
export const configurationWithoutVarChanges = sql`json_remove(${runs.configuration}, '$.varChanges')`;
