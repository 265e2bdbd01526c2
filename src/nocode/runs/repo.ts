/**
 * D1 access for runs and state versions (decision N7), with the run state machine's
 * conditional transitions: every status change is `UPDATE runs SET status = ? WHERE id = ?
 * AND status IN (…)`, and the caller checks whether it changed a row. That is what makes
 * the Queue handlers idempotent by run id (N11): a redelivered message finds the run
 * already moved on and does nothing.
 */
import { and, desc, eq, exists, inArray, isNotNull, lte, not, type SQL, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { type Page, type PageWindow, tablePage } from "../../db/page";
import { agentJobs, runs, stateVersions, workspaces } from "../../db/schema/nocode";
import { isoTime } from "../respond";

/** A run row. */
export type RunRow = typeof runs.$inferSelect;
/** A state version row. */
export type StateVersionRow = typeof stateVersions.$inferSelect;

/** HCP Terraform's run states that this service uses (N7; HCP Terraform's run states). */
export const RUN_STATUSES = [
  "pending",
  "plan_queued",
  "planning",
  "planned",
  "confirmed",
  "apply_queued",
  "applying",
  "applied",
  "planned_and_finished",
  "discarded",
  "errored",
  "canceled",
] as const;

/** A run state (N7). */
export type RunStatus = (typeof RUN_STATUSES)[number];

/** N8: terminal states. */
export const TERMINAL_RUN_STATUSES: readonly RunStatus[] = [
  "applied",
  "planned_and_finished",
  "errored",
  "discarded",
  "canceled",
];

/** Every state a run can leave: the states of RUN_STATUSES that are not terminal, in its order. */
export const NON_TERMINAL_RUN_STATUSES: readonly RunStatus[] = RUN_STATUSES.filter(
  (status) => !TERMINAL_RUN_STATUSES.includes(status),
);

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

/** Statements that store a new run (to batch with other writes, as E4 does). */
export function insertRunQuery(db: Db, row: RunRow) {
  return db.insert(runs).values(row);
}

/**
 * Statements that store a run and make it the workspace's `latest-run` and
 * `current-run`.
 */
export function insertLatestRunStatements(db: Db, row: RunRow) {
  return [
    insertRunQuery(db, row),
    db
      .update(workspaces)
      .set({ latestRunId: row.id, currentRunId: row.id, updatedAt: row.createdAt })
      .where(eq(workspaces.id, row.workspaceId)),
  ] as const;
}

/** One page of a workspace's runs, newest first, and their total count. */
export async function workspaceRunsPage(db: Db, workspaceId: string, page: PageWindow): Promise<Page<RunRow>> {
  const where = eq(runs.workspaceId, workspaceId);
  return tablePage(db, runs, where, [desc(runs.createdAt), desc(runs.id)], page);
}

/**
 * What planning a run of the workspace reads of it (N7's baseline): its current state
 * version and the configuration of the run that recorded it (null when that run is gone),
 * in one statement. No row: the workspace does not exist.
 */
export function workspaceBaselineQuery(db: Db, workspaceId: string | SQL) {
  return db
    .select({ currentStateVersionId: workspaces.currentStateVersionId, configuration: runs.configuration })
    .from(workspaces)
    .leftJoin(stateVersions, eq(stateVersions.id, workspaces.currentStateVersionId))
    .leftJoin(runs, eq(runs.id, stateVersions.runId))
    .where(eq(workspaces.id, workspaceId))
    .limit(1);
}

/**
 * A run's workspace id as an SQL subquery: the plan step reads the workspace's baseline in
 * the batch that claims the run, before it has the run row (docs/performance.md).
 */
export function runWorkspaceIdSql(runId: string): SQL {
  return sql`(SELECT ${runs.workspaceId} FROM ${runs} WHERE ${runs.id} = ${runId})`;
}

/** A row of {@link workspaceBaselineQuery}. */
export type WorkspaceBaselineRow = Awaited<ReturnType<typeof workspaceBaselineQuery>>[number];

/** SQL true while the workspace has a non-terminal run. */
export function workspaceBusy(db: Db, workspaceId: string) {
  return exists(
    db
      .select({ one: sql`1` })
      .from(runs)
      .where(and(eq(runs.workspaceId, workspaceId), inArray(runs.status, [...NON_TERMINAL_RUN_STATUSES]))),
  );
}

/** The workspace's non-terminal runs (N8: at most one, but read them all). */
export function listActiveRuns(db: Db, workspaceId: string): Promise<RunRow[]> {
  return db
    .select()
    .from(runs)
    .where(and(eq(runs.workspaceId, workspaceId), inArray(runs.status, [...NON_TERMINAL_RUN_STATUSES])))
    .all();
}

/** Whether the workspace has a non-terminal run. */
export async function hasActiveRun(db: Db, workspaceId: string): Promise<boolean> {
  const row = await db
    .select({ id: runs.id })
    .from(runs)
    .where(and(eq(runs.workspaceId, workspaceId), inArray(runs.status, [...NON_TERMINAL_RUN_STATUSES])))
    .get();
  return row !== undefined;
}

/**
 * SQL true when the run is `status` and its last claiming move carried `token`: a
 * conditional write batched with that move recognises by it the transition this request
 * made. A random token, not the move's time stamp: concurrent requests in workerd can
 * read the same `Date.now()`.
 */
export function runMovedBy(db: Db, runId: string, status: RunStatus, token: string) {
  return exists(
    db
      .select({ one: sql`1` })
      .from(runs)
      .where(and(eq(runs.id, runId), eq(runs.status, status), eq(runs.transitionToken, token))),
  );
}

/**
 * Statements that discard a `planned` run (`planned → discarded`, conditional) and drop
 * the pending variable changes an upgrade run keeps, if this discard happened.
 */
export function discardPlannedRunStatements(db: Db, runId: string, at: number) {
  return [
    transitionRunQuery(db, runId, ["planned"], ["discarded"], at).returning({ id: runs.id }),
    db
      .update(runs)
      .set({ configuration: configurationWithoutVarChanges })
      .where(and(eq(runs.id, runId), eq(runs.status, "discarded"))),
  ] as const;
}

/** Drop the pending variable changes from a run's stored configuration, if `condition` holds. */
export function dropVarChangesQuery(db: Db, runId: string, condition?: SQL) {
  return db
    .update(runs)
    .set({ configuration: configurationWithoutVarChanges })
    .where(condition ? and(eq(runs.id, runId), condition) : eq(runs.id, runId));
}

/** Put back a run's stored configuration, if `condition` holds. */
export function restoreConfigurationQuery(db: Db, runId: string, configuration: string, condition: SQL) {
  return db
    .update(runs)
    .set({ configuration })
    .where(and(eq(runs.id, runId), condition));
}

/**
 * Undo an insert of `runId` unless `kept` holds (a conditional delete batched after it).
 */
export function deleteRunUnlessQuery(db: Db, runId: string, kept: SQL) {
  return db.delete(runs).where(and(eq(runs.id, runId), not(kept)));
}

/**
 * The apply of a run as one D1 batch (a transaction): the run's move `applying → applied`
 * (recording `stateVersionId`) decides whether the state version and the workspace
 * update happen at all, so a redelivered apply never applies twice (N7, N11).
 */
export function applyRunStatements(
  db: Db,
  run: Pick<RunRow, "id" | "workspaceId">,
  stateVersionId: string,
  resources: readonly string[],
  outputs: readonly { name: string; sensitive: boolean; value: null }[],
  at: number,
) {
  const won = exists(
    db
      .select({ one: sql`1` })
      .from(runs)
      .where(and(eq(runs.id, run.id), eq(runs.stateVersionId, stateVersionId))),
  );
  return [
    transitionRunQuery(db, run.id, ["applying"], ["applied"], at, { stateVersionId }),
    // Columns in the table's declared order: id, workspace_id, run_id, serial, resources, outputs, created_at,
    // then N20's kind, lineage, md5, size, object_id (a built-in apply writes a structural version).
    db.insert(stateVersions).select(sql`SELECT ${stateVersionId}, ${run.workspaceId}, ${run.id},
        COALESCE((SELECT MAX(serial) FROM state_versions WHERE workspace_id = ${run.workspaceId}), 0) + 1,
        ${JSON.stringify(resources)}, ${JSON.stringify(outputs)}, ${at}, 'structural', NULL, NULL, NULL, NULL
      WHERE EXISTS (SELECT 1 FROM runs WHERE id = ${run.id} AND state_version_id = ${stateVersionId})`),
    db
      .update(workspaces)
      .set({
        resourceCount: resources.length,
        currentStateVersionId: stateVersionId,
        latestChangeAt: at,
        updatedAt: at,
      })
      .where(and(eq(workspaces.id, run.workspaceId), won)),
  ] as const;
}

/** A state version by id, with the organization of its workspace (undefined when either is gone). */
export function findStateVersionWithOrganization(
  db: Db,
  id: string,
): Promise<(StateVersionRow & { organization: string }) | undefined> {
  return db
    .select({
      id: stateVersions.id,
      workspaceId: stateVersions.workspaceId,
      runId: stateVersions.runId,
      serial: stateVersions.serial,
      resources: stateVersions.resources,
      outputs: stateVersions.outputs,
      createdAt: stateVersions.createdAt,
      kind: stateVersions.kind,
      lineage: stateVersions.lineage,
      md5: stateVersions.md5,
      size: stateVersions.size,
      objectId: stateVersions.objectId,
      organization: workspaces.organization,
    })
    .from(stateVersions)
    .innerJoin(workspaces, eq(workspaces.id, stateVersions.workspaceId))
    .where(eq(stateVersions.id, id))
    .get();
}

/** A run of the workspace that has not ended (at most one exists: N7 refuses a second), if any. */
export function findActiveRun(
  db: Db,
  workspaceId: string,
): Promise<Pick<RunRow, "id" | "status" | "kind"> | undefined> {
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
  return db
    .select()
    .from(runs)
    .where(eq(runs.workspaceId, workspaceId))
    .orderBy(desc(runs.createdAt), desc(runs.id))
    .limit(limit)
    .all();
}

/** Columns a transition may set besides status, timestamps and updated_at. */
export type RunTransitionSet = Partial<
  Pick<RunRow, "plan" | "error" | "stateVersionId" | "message" | "transitionToken">
>;

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
  /** A further condition the move needs (e.g. {@link WORKSPACE_NOT_USER_LOCKED}). */
  condition?: SQL,
) {
  const to = through[through.length - 1]!;
  return db
    .update(runs)
    .set({ ...set, status: to, statusTimestamps: stampSql(through, at), updatedAt: at })
    .where(and(eq(runs.id, runId), inArray(runs.status, [...from]), condition));
}

/**
 * N20: a condition of a run's move to `planning`: no user or team holds its workspace's
 * lock (such a lock keeps queued runs in `plan_queued`).
 */
export const WORKSPACE_NOT_USER_LOCKED = sql`NOT EXISTS (SELECT 1 FROM workspaces WHERE workspaces.id = runs.workspace_id AND workspaces.locked_by IS NOT NULL)`;

/** N20: the run statuses in which a run holds its workspace's lock (from `planning` to its end). */
export const LOCK_HOLDING_STATUSES: readonly RunStatus[] = [
  "planning",
  "planned",
  "confirmed",
  "apply_queued",
  "applying",
];

/** N20: the run of `workspaceId` holding its lock, if any. */
export function findLockingRun(db: Db, workspaceId: string) {
  return db
    .select({ id: runs.id, status: runs.status })
    .from(runs)
    .where(and(eq(runs.workspaceId, workspaceId), inArray(runs.status, [...LOCK_HOLDING_STATUSES])))
    .get();
}

/** N20: the runs a user's lock keeps queued (a remote workspace's; sent to the planner again on unlock). */
export function findQueuedRuns(db: Db, workspaceId: string): Promise<{ id: string }[]> {
  return db
    .select({ id: runs.id })
    .from(runs)
    .where(and(eq(runs.workspaceId, workspaceId), inArray(runs.status, ["pending", "plan_queued"])))
    .all();
}

/** N20: whether a user or team holds the workspace's lock. */
export async function workspaceUserLocked(db: Db, workspaceId: string): Promise<boolean> {
  const row = await db
    .select({ lockedBy: workspaces.lockedBy })
    .from(workspaces)
    .where(eq(workspaces.id, workspaceId))
    .get();
  return row?.lockedBy != null;
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
  const row = await transitionRunReturningQuery(db, runId, from, through, at, set).get();
  return row !== undefined;
}

/** {@link transitionRunQuery} returning the run's id when it moved (no row when it did not), for a `db.batch`. */
export function transitionRunReturningQuery(...transition: Parameters<typeof transitionRunQuery>) {
  return transitionRunQuery(...transition).returning({ id: runs.id });
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

/** N19a: the run statuses a cancel is accepted in (409 otherwise). */
export const CANCELABLE_RUN_STATUSES = ["pending", "plan_queued", "planning", "apply_queued", "applying"] as const;

/** N19a: the statuses in which a run waits without a running job (a cancel ends it at once). */
const WAITING_RUN_STATUSES: readonly RunStatus[] = ["pending", "plan_queued", "apply_queued"];

/** N19a: the statuses in which an agent runs the run's job (a cancel is signalled to the agent). */
export const RUNNING_RUN_STATUSES: readonly RunStatus[] = ["planning", "applying"];

const NO_RUNNING_JOB = (runId: string) =>
  sql`NOT EXISTS (SELECT 1 FROM agent_jobs WHERE agent_jobs.run_id = ${runId} AND agent_jobs.status = 'running')`;

/**
 * N19a: the statements of a cancel of an agent run, one D1 batch: the run's queued job (if
 * any) becomes `canceled`; a run waiting without a running job becomes `canceled`; a run
 * whose job runs keeps its status and records when the cancel was first asked. Each is
 * conditional, so a job an agent starts concurrently (its start is one batch too) is either
 * canceled before it starts or signalled after.
 */
export function cancelRunStatements(db: Db, runId: string, at: number) {
  return [
    db
      .update(agentJobs)
      .set({ status: "canceled", finishedAt: at, message: "the run was canceled", updatedAt: at })
      .where(and(eq(agentJobs.runId, runId), eq(agentJobs.status, "queued")))
      .returning({ id: agentJobs.id, poolId: agentJobs.poolId }),
    transitionRunQuery(db, runId, WAITING_RUN_STATUSES, ["canceled"], at, {}, NO_RUNNING_JOB(runId)).returning({
      id: runs.id,
    }),
    db
      .update(runs)
      .set({ cancelRequestedAt: sql`COALESCE(${runs.cancelRequestedAt}, ${at})`, updatedAt: at })
      .where(and(eq(runs.id, runId), inArray(runs.status, [...RUNNING_RUN_STATUSES])))
      .returning({ cancelRequestedAt: runs.cancelRequestedAt }),
    db
      .select({ id: agentJobs.id, poolId: agentJobs.poolId })
      .from(agentJobs)
      .where(and(eq(agentJobs.runId, runId), eq(agentJobs.status, "running"))),
  ] as const;
}

/** The conditional cancel of a run that no agent runs (a `remote` run: the built-in planner's writes are conditional too). */
export function cancelRunNowQuery(db: Db, runId: string, at: number) {
  return transitionRunQuery(db, runId, CANCELABLE_RUN_STATUSES, ["canceled"], at).returning({ id: runs.id });
}

/**
 * N19a: the statements of a force-cancel: the running job becomes `canceled` and records
 * `force_canceled_at` (its token then serves only the state upload); the run becomes
 * `canceled`, which releases the workspace's lock (a run's lock is its status). Both only
 * when a cancel was asked at or before `askedBy`.
 */
export function forceCancelRunStatements(db: Db, runId: string, at: number, askedBy: number) {
  const asked = sql`EXISTS (SELECT 1 FROM runs WHERE runs.id = ${runId} AND runs.cancel_requested_at <= ${askedBy}
    AND runs.status IN ('planning', 'applying'))`;
  return [
    db
      .update(agentJobs)
      .set({
        status: "canceled",
        finishedAt: at,
        forceCanceledAt: at,
        message: "the run was force-canceled",
        updatedAt: at,
      })
      .where(and(eq(agentJobs.runId, runId), eq(agentJobs.status, "running"), asked))
      .returning({ id: agentJobs.id, poolId: agentJobs.poolId }),
    transitionRunQuery(
      db,
      runId,
      RUNNING_RUN_STATUSES,
      ["canceled"],
      at,
      {},
      and(isNotNull(runs.cancelRequestedAt), lte(runs.cancelRequestedAt, askedBy)),
    ).returning({ id: runs.id }),
  ] as const;
}

/** Record the plan of a run that is still `planning` (the JSON plan its agent uploaded: N18, N20). */
export function recordPlanningRunPlanQuery(db: Db, runId: string, plan: string, at: number) {
  return db
    .update(runs)
    .set({ plan, updatedAt: at })
    .where(and(eq(runs.id, runId), eq(runs.status, "planning")));
}
