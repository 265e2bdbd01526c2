/** Teams, their organization access and membership (N9, N10). */
import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { inJsonList } from "../../db/json-list";
import { type Page, type PageWindow, tablePage } from "../../db/page";
import { nocodeUsers, teamMemberships, teams } from "../../db/schema/nocode";

export type TeamRow = typeof teams.$inferSelect;

/** The six organization-access flags of N9, by their JSON:API names. */
export const ORGANIZATION_ACCESS = {
  "manage-workspaces": "manageWorkspaces",
  "manage-projects": "manageProjects",
  "manage-modules": "manageModules",
  "manage-agent-pools": "manageAgentPools",
  "read-workspaces": "readWorkspaces",
  "read-projects": "readProjects",
} as const satisfies Record<string, keyof TeamRow>;

/** A team by id. */
export async function findTeam(db: Db, id: string): Promise<TeamRow | undefined> {
  return db.select().from(teams).where(eq(teams.id, id)).get();
}

/** Ids of the members of each team (for the `users` relationship). */
export async function memberIds(db: Db, teamIds: string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>(teamIds.map((id) => [id, []]));
  if (teamIds.length === 0) return out;
  const rows = await db
    .select({ teamId: teamMemberships.teamId, userId: teamMemberships.userId })
    .from(teamMemberships)
    .where(inJsonList(teamMemberships.teamId, teamIds))
    .orderBy(teamMemberships.createdAt, teamMemberships.userId)
    .all();
  for (const row of rows) out.get(row.teamId)?.push(row.userId);
  return out;
}

/** Inserts a team; its UNIQUE (organization, name) index refuses a taken name (see insertUnique). */
export function insertTeam(db: Db, team: TeamRow) {
  return db.insert(teams).values(team);
}

/** A page of an organization's teams, by name, and the total count. */
export async function listTeams(db: Db, organization: string, page: PageWindow): Promise<Page<TeamRow>> {
  return tablePage(db, teams, eq(teams.organization, organization), [teams.name], page);
}

/** Resolve usernames (or user ids) to user ids; the ones not found are returned apart. */
export async function resolveUsers(db: Db, names: string[]): Promise<{ ids: string[]; missing: string[] }> {
  const unique = [...new Set(names)];
  if (unique.length === 0) return { ids: [], missing: [] };
  const rows = await db
    .select({ id: nocodeUsers.id, username: nocodeUsers.username })
    .from(nocodeUsers)
    .where(inJsonList(nocodeUsers.username, unique))
    .all();
  const byName = new Map(rows.map((r) => [r.username, r.id]));
  const leftover = unique.filter((n) => !byName.has(n));
  const byId = leftover.length
    ? new Set(
        (
          await db.select({ id: nocodeUsers.id }).from(nocodeUsers).where(inJsonList(nocodeUsers.id, leftover)).all()
        ).map((r) => r.id),
      )
    : new Set<string>();
  const ids: string[] = [];
  const missing: string[] = [];
  for (const n of unique) {
    const id = byName.get(n) ?? (byId.has(n) ? n : undefined);
    if (id) ids.push(id);
    else missing.push(n);
  }
  return { ids: [...new Set(ids)], missing };
}

/**
 * Add users to a team (idempotent). One statement whatever the number of users: the ids
 * travel as one JSON parameter (B8; a row per user would bind 3 parameters each).
 */
export async function addMembers(db: Db, teamId: string, userIds: string[]): Promise<void> {
  if (userIds.length === 0) return;
  const now = Date.now();
  // `WHERE true` keeps SQLite from reading ON CONFLICT as part of the SELECT (upsert parsing rule).
  await db.run(sql`INSERT INTO ${teamMemberships} (team_id, user_id, created_at)
    SELECT ${teamId}, value, ${now} FROM json_each(${JSON.stringify(userIds)}) WHERE true
    ON CONFLICT DO NOTHING`);
}

/** Remove users from a team (absent members are ignored). */
export async function removeMembers(db: Db, teamId: string, userIds: string[]): Promise<void> {
  if (userIds.length === 0) return;
  await db
    .delete(teamMemberships)
    .where(and(eq(teamMemberships.teamId, teamId), inJsonList(teamMemberships.userId, userIds)));
}
