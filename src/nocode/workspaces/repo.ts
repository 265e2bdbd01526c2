/** D1 access for workspaces and their variables (decisions N5, N6, N9). */
import { and, asc, eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { workspaces, workspaceVars } from "../../db/schema";

/** A workspace row. */
export type WorkspaceRow = typeof workspaces.$inferSelect;
/** A workspace variable row (sensitive values only encrypted, B2). */
export type WorkspaceVarRow = typeof workspaceVars.$inferSelect;

/** A workspace by id. */
export function findWorkspace(db: Db, id: string): Promise<WorkspaceRow | undefined> {
  return db.select().from(workspaces).where(eq(workspaces.id, id)).get();
}

/** A workspace by organization and name. */
export async function findWorkspaceByName(db: Db, organization: string, name: string): Promise<WorkspaceRow | undefined> {
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
export function listWorkspaceVars(db: Db, workspaceId: string): Promise<WorkspaceVarRow[]> {
  return db
    .select()
    .from(workspaceVars)
    .where(eq(workspaceVars.workspaceId, workspaceId))
    .orderBy(asc(workspaceVars.createdAt), asc(workspaceVars.id))
    .all();
}

/** A variable of a workspace. */
export function findWorkspaceVar(db: Db, workspaceId: string, varId: string): Promise<WorkspaceVarRow | undefined> {
  return db
    .select()
    .from(workspaceVars)
    .where(and(eq(workspaceVars.workspaceId, workspaceId), eq(workspaceVars.id, varId)))
    .get();
}
