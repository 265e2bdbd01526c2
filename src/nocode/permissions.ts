/**
 * The permission model of the no-code service (decision N10).
 *
 * - A user's rights are the union of its teams' in the organization; a team token has
 *   its team's rights.
 * - The team `owners` may do everything in its organization.
 * - `manage-workspaces` implies `read-workspaces`.
 * - Any member (a user in any team of the organization, or a team token) may read the
 *   organization, its teams, E3, registry modules, projects and agent pools (`member`).
 * - The organization token may do everything in its organization, except where the
 *   endpoint passes `organizationTokenAllowed: false` (E1, E2, E4–E7, run actions).
 * - ADMIN_TOKEN has no organization rights: admin-only endpoints (N9 bootstrap, the N6
 *   release list) check `caller.kind === "admin"` themselves.
 * - Not permitted → 404 `not found` (N2, N10), never 403.
 */
import { and, eq } from "drizzle-orm";
import type { Db } from "../db/client";
import { teamMemberships, teams } from "../db/schema";
import type { NocodeCaller } from "./auth";
import { cachedNocode } from "./cache";
import { notFound } from "./errors";

/** A right within one organization. */
export type OrgPermission =
  | "member"
  | "read-workspaces"
  | "manage-workspaces"
  | "manage-modules"
  | "manage-projects"
  | "manage-agent-pools"
  | "owner";

/** Every organization permission, for owners and the organization token. */
export const ALL_ORG_PERMISSIONS: readonly OrgPermission[] = [
  "member",
  "read-workspaces",
  "manage-workspaces",
  "manage-modules",
  "manage-projects",
  "manage-agent-pools",
  "owner",
];

/** The name of the team that may do everything in its organization (N9, N10). */
export const OWNERS_TEAM = "owners";

/** Options of a permission check. */
export interface OrgPermissionOptions {
  /** false for endpoints the organization token may not use (N10: E1, E2, E4–E7, run actions). */
  organizationTokenAllowed?: boolean;
}

type TeamRow = typeof teams.$inferSelect;

/** The rights a team grants in its organization. */
export function teamPermissions(team: Pick<TeamRow, "name" | "manageWorkspaces" | "manageModules" | "manageProjects" | "manageAgentPools" | "readWorkspaces">): Set<OrgPermission> {
  if (team.name === OWNERS_TEAM) return new Set(ALL_ORG_PERMISSIONS);
  const out = new Set<OrgPermission>(["member"]);
  if (team.manageWorkspaces) out.add("manage-workspaces").add("read-workspaces");
  if (team.readWorkspaces) out.add("read-workspaces");
  if (team.manageModules) out.add("manage-modules");
  if (team.manageProjects) out.add("manage-projects");
  if (team.manageAgentPools) out.add("manage-agent-pools");
  return out;
}

/**
 * The caller's effective rights in `organization` (empty when none). The organization
 * token has every right in its own organization unless `organizationTokenAllowed` is
 * false; ADMIN_TOKEN has none.
 */
export async function orgCallerPermissions(
  db: Db,
  caller: NocodeCaller,
  organization: string,
  options: OrgPermissionOptions = {},
): Promise<Set<OrgPermission>> {
  switch (caller.kind) {
    case "admin":
      return new Set();
    case "organization":
      return caller.organization === organization && options.organizationTokenAllowed !== false
        ? new Set(ALL_ORG_PERMISSIONS)
        : new Set();
    case "team": {
      if (caller.organization !== organization) return new Set();
      return new Set(await cachedNocode(`perm:team:${caller.teamId}:${organization}`, () => teamRights(db, caller.teamId, organization)));
    }
    case "user":
      return new Set(await cachedNocode(`perm:user:${caller.userId}:${organization}`, () => userRights(db, caller.userId, organization)));
  }
}

/** A team token's rights in `organization`, read from D1. */
async function teamRights(db: Db, teamId: string, organization: string): Promise<readonly OrgPermission[]> {
  const team = await db
    .select()
    .from(teams)
    .where(and(eq(teams.id, teamId), eq(teams.organization, organization)))
    .get();
  return team ? [...teamPermissions(team)] : [];
}

/** A user's rights in `organization` (the union of its teams'), read from D1. */
async function userRights(db: Db, userId: string, organization: string): Promise<readonly OrgPermission[]> {
  const rows = await db
    .select({
      name: teams.name,
      manageWorkspaces: teams.manageWorkspaces,
      manageModules: teams.manageModules,
      manageProjects: teams.manageProjects,
      manageAgentPools: teams.manageAgentPools,
      readWorkspaces: teams.readWorkspaces,
    })
    .from(teamMemberships)
    .innerJoin(teams, eq(teams.id, teamMemberships.teamId))
    .where(and(eq(teamMemberships.userId, userId), eq(teams.organization, organization)))
    .all();
  const out = new Set<OrgPermission>();
  for (const row of rows) for (const p of teamPermissions(row)) out.add(p);
  return [...out];
}

/** Whether the caller holds `permission` in `organization` (N10). */
export async function hasOrgPermission(
  db: Db,
  caller: NocodeCaller,
  organization: string,
  permission: OrgPermission,
  options?: OrgPermissionOptions,
): Promise<boolean> {
  return (await orgCallerPermissions(db, caller, organization, options)).has(permission);
}

/** Throw 404 `not found` unless the caller holds `permission` in `organization` (N2, N10). */
export async function requireOrgPermission(
  db: Db,
  caller: NocodeCaller,
  organization: string,
  permission: OrgPermission,
  options?: OrgPermissionOptions,
): Promise<void> {
  if (!(await hasOrgPermission(db, caller, organization, permission, options))) throw notFound();
}
