/** D1 access for workspaces and their variables (decisions N5, N6, N9). */
import { and, asc, eq, exists, isNotNull, isNull, type SQL, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { workspaces, workspaceVars } from "../../db/schema/nocode";
import { LOCK_HOLDING_STATUSES } from "../runs/repo";

/** A workspace row. */
export type WorkspaceRow = typeof workspaces.$inferSelect;
/** A workspace variable row (sensitive values only encrypted, B2). */
export type WorkspaceVarRow = typeof workspaceVars.$inferSelect;

/** A workspace by id. */
export function findWorkspace(db: Db, id: string): Promise<WorkspaceRow | undefined> {
  return db.select().from(workspaces).where(eq(workspaces.id, id)).get();
}

/** A workspace by organization and name. */
export async function findWorkspaceByName(
  db: Db,
  organization: string,
  name: string,
): Promise<WorkspaceRow | undefined> {
  return (await workspaceByNameQuery(db, organization, name))[0];
}

/** The select behind findWorkspaceByName, for a `db.batch` with other reads (at most one row). */
export function workspaceByNameQuery(db: Db, organization: string, name: string) {
  return db
    .select()
    .from(workspaces)
    .where(and(eq(workspaces.organization, organization), eq(workspaces.name, name)))
    .limit(1);
}

/** The variables of a workspace in creation order. */
export async function listWorkspaceVars(db: Db, workspaceId: string): Promise<WorkspaceVarRow[]> {
  return workspaceVarsQuery(db, workspaceId);
}

/** The select behind listWorkspaceVars, for a `db.batch` with other reads. */
export function workspaceVarsQuery(db: Db, workspaceId: string) {
  return db
    .select()
    .from(workspaceVars)
    .where(eq(workspaceVars.workspaceId, workspaceId))
    .orderBy(asc(workspaceVars.createdAt), asc(workspaceVars.id));
}

/** A variable of a workspace. */
export function findWorkspaceVar(db: Db, workspaceId: string, varId: string): Promise<WorkspaceVarRow | undefined> {
  return db
    .select()
    .from(workspaceVars)
    .where(and(eq(workspaceVars.workspaceId, workspaceId), eq(workspaceVars.id, varId)))
    .get();
}

/**
 * Statements that store a new workspace and its vars, one statement per row: D1 caps
 * bound parameters per statement at 100, and a workspace row alone binds 29.
 */
export function insertWorkspaceStatements(db: Db, workspace: WorkspaceRow, vars: readonly WorkspaceVarRow[]) {
  return [db.insert(workspaces).values(workspace), ...vars.map((v) => insertWorkspaceVarQuery(db, v))] as const;
}

/** Store a new variable (not executed: run it or batch it). */
export function insertWorkspaceVarQuery(db: Db, row: WorkspaceVarRow) {
  return db.insert(workspaceVars).values(row);
}

/** The columns a variable write may change. */
export type WorkspaceVarChange = Omit<WorkspaceVarRow, "id" | "workspaceId" | "createdAt">;

/**
 * Update a variable of a workspace (not executed); with `condition`, only while it holds
 * (E7 writes its vars only if its run move won).
 */
export function updateWorkspaceVarQuery(
  db: Db,
  workspaceId: string,
  varId: string,
  set: Partial<WorkspaceVarChange>,
  condition?: SQL,
) {
  const where = and(eq(workspaceVars.id, varId), eq(workspaceVars.workspaceId, workspaceId));
  return db
    .update(workspaceVars)
    .set(set)
    .where(condition ? and(where, condition) : where);
}

/** Delete a variable of a workspace (not executed); with `condition`, only while it holds. */
export function deleteWorkspaceVarQuery(db: Db, workspaceId: string, varId: string, condition?: SQL) {
  const where = and(eq(workspaceVars.id, varId), eq(workspaceVars.workspaceId, workspaceId));
  return db.delete(workspaceVars).where(condition ? and(where, condition) : where);
}

/** Update a workspace's columns (not executed); with `condition`, only while it holds. */
export function updateWorkspaceQuery(
  db: Db,
  workspaceId: string,
  set: Partial<Omit<WorkspaceRow, "id">>,
  condition?: SQL,
) {
  return db
    .update(workspaces)
    .set(set)
    .where(condition ? and(eq(workspaces.id, workspaceId), condition) : eq(workspaces.id, workspaceId));
}

/** SQL true while the workspace's latest run is `runId`. */
export function workspaceLatestRunIs(db: Db, workspaceId: string, runId: string) {
  return exists(
    db
      .select({ one: sql`1` })
      .from(workspaces)
      .where(and(eq(workspaces.id, workspaceId), eq(workspaces.latestRunId, runId))),
  );
}

/** The workspaces created from a no-code module, oldest first (at most `limit`). */
export function listModuleWorkspaces(db: Db, noCodeModuleId: string, limit: number): Promise<WorkspaceRow[]> {
  return db
    .select()
    .from(workspaces)
    .where(eq(workspaces.noCodeModuleId, noCodeModuleId))
    .orderBy(workspaces.createdAt, workspaces.id)
    .limit(limit)
    .all();
}

/** Id and update time of every var of the module's workspaces (what a rollout's var digest covers), in one statement. */
export function listModuleWorkspaceVarStamps(
  db: Db,
  noCodeModuleId: string,
): Promise<{ workspaceId: string; id: string; updatedAt: number }[]> {
  return db
    .select({ workspaceId: workspaceVars.workspaceId, id: workspaceVars.id, updatedAt: workspaceVars.updatedAt })
    .from(workspaceVars)
    .innerJoin(workspaces, eq(workspaces.id, workspaceVars.workspaceId))
    .where(eq(workspaces.noCodeModuleId, noCodeModuleId))
    .all();
}

/**
 * N20: set (`holder`) or clear (null) a workspace's user lock where `condition` holds;
 * true when it moved.
 */
async function writeLock(db: Db, id: string, holder: string | null, condition: SQL | undefined) {
  const now = Date.now();
  const moved = await db
    .update(workspaces)
    .set({ locked: holder !== null, lockedBy: holder, lockedAt: holder === null ? null : now, updatedAt: now })
    .where(and(eq(workspaces.id, id), condition))
    .returning({ id: workspaces.id });
  return moved.length > 0;
}

/** N20: a lock may be taken when nobody holds it and no run of the workspace holds it (from planning to its end). */
function lockIsFree(workspaceId: string): SQL | undefined {
  return and(
    isNull(workspaces.lockedBy),
    sql`NOT EXISTS (SELECT 1 FROM runs WHERE runs.workspace_id = ${workspaceId} AND runs.status IN (${sql.join(
      LOCK_HOLDING_STATUSES.map((s) => sql`${s}`),
      sql`, `,
    )}))`,
  );
}

/** N20: `holder` takes the workspace's lock if it is free; true when it did. */
export function takeLock(db: Db, id: string, holder: string): Promise<boolean> {
  return writeLock(db, id, holder, lockIsFree(id));
}

/** N20: `holder` releases the workspace's lock if it still holds it; true when it did. */
export function releaseLock(db: Db, id: string, holder: string): Promise<boolean> {
  return writeLock(db, id, null, eq(workspaces.lockedBy, holder));
}

/** N20: force-unlock releases the workspace's user lock whoever holds it; true when one was held. */
export function forceReleaseLock(db: Db, id: string): Promise<boolean> {
  return writeLock(db, id, null, isNotNull(workspaces.lockedBy));
}
