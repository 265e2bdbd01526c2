/**
 * The permission model of the no-code service (decisions N10, N10a).
 *
 * Every caller has one set of rights per organization, and every check is "does the
 * caller hold right R in organization O" — there is no per-endpoint exception:
 * - A user's rights are the union of its teams' in the organization; a team token has
 *   its team's rights. The team `owners` has every right.
 * - `read-workspaces` grants `read-upgrades` too; `manage-workspaces` grants both and
 *   `write-vars` and `run-workspaces`;
 *   `manage-modules` grants `manage-registry-modules` and `manage-no-code-modules`.
 * - Any member (a user in any team of the organization, or a team token) is `member`:
 *   it may read the organization, its teams, E3, registry modules, projects and agent pools.
 * - The organization token holds ORGANIZATION_TOKEN_RIGHTS in its own organization:
 *   everything except what N10 forbids it (`run-workspaces`: E4, E5, E7 and run actions;
 *   `read-upgrades`: E6; `manage-no-code-modules`: E1, E2 and the legacy `no-code: true`),
 *   and not `owner`.
 * - ADMIN_TOKEN holds ADMIN_BOOTSTRAP_RIGHTS in every organization (N9's bootstrap:
 *   teams, team tokens, memberships, the organization token) and nothing else there;
 *   its other endpoints (organizations, users, the N6 release list) check the caller kind.
 * - N10a: a team's tokens and membership are managed only by a caller holding
 *   `manage-teams` and every right the team grants (no escalation through a team):
 *   see mayDelegateTeam. ADMIN_TOKEN is exempt (it mints the first owners' token).
 * - N16: a user signed in to the console by an organization's single sign-on holds rights
 *   in that organization only (`onlyOrganization`), whatever its other memberships.
 * - Not permitted → 404 `not found` (N2, N10), never 403.
 */
import { and, eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { teamMemberships, teams } from "../../db/schema/nocode";
import { cachedNocode } from "../cache";
import { notFound } from "../errors";
import type { NocodeCaller } from "./auth";

/** A right within one organization. */
export type OrgPermission =
  /** Read the organization, its teams, E3, registry modules, projects, agent pools. */
  | "member"
  /** Read workspaces, runs, plans, vars, state versions. */
  | "read-workspaces"
  /** E6: an upgrade run's status (granted with read-workspaces; N10 keeps it from the organization token). */
  | "read-upgrades"
  /** Create, change and delete workspace vars. */
  | "write-vars"
  /** E4, E5, E7 and run actions (apply, discard). */
  | "run-workspaces"
  /** Registry-module writes (create, versions, delete) and no-code module DELETE. */
  | "manage-registry-modules"
  /** E1, E2 and the legacy `no-code: true` create (they enable no-code provisioning). */
  | "manage-no-code-modules"
  | "manage-projects"
  | "manage-agent-pools"
  /** Teams, team tokens, memberships and the organization token (N9's bootstrap). */
  | "manage-teams"
  /** Only the team `owners` (the organization's own settings). */
  | "owner";

/** Every organization permission: the team `owners`. */
export const ALL_ORG_PERMISSIONS: readonly OrgPermission[] = [
  "member",
  "read-workspaces",
  "read-upgrades",
  "write-vars",
  "run-workspaces",
  "manage-registry-modules",
  "manage-no-code-modules",
  "manage-projects",
  "manage-agent-pools",
  "manage-teams",
  "owner",
];

/** N10, N10a: the organization token's rights in its own organization. */
export const ORGANIZATION_TOKEN_RIGHTS: readonly OrgPermission[] = ALL_ORG_PERMISSIONS.filter(
  (p) => p !== "run-workspaces" && p !== "read-upgrades" && p !== "manage-no-code-modules" && p !== "owner",
);

/** N9, N10a: ADMIN_TOKEN's rights inside an existing organization (bootstrap only). */
export const ADMIN_BOOTSTRAP_RIGHTS: readonly OrgPermission[] = ["manage-teams"];

/** The name of the team that may do everything in its organization (N9, N10). */
export const OWNERS_TEAM = "owners";

type TeamRow = typeof teams.$inferSelect;

/** The rights a team grants in its organization. */
export function teamPermissions(
  team: Pick<
    TeamRow,
    "name" | "manageWorkspaces" | "manageModules" | "manageProjects" | "manageAgentPools" | "readWorkspaces"
  >,
): Set<OrgPermission> {
  if (team.name === OWNERS_TEAM) return new Set(ALL_ORG_PERMISSIONS);
  const out = new Set<OrgPermission>(["member"]);
  if (team.manageWorkspaces) out.add("read-workspaces").add("read-upgrades").add("write-vars").add("run-workspaces");
  if (team.readWorkspaces) out.add("read-workspaces").add("read-upgrades");
  if (team.manageModules) out.add("manage-registry-modules").add("manage-no-code-modules");
  if (team.manageProjects) out.add("manage-projects");
  if (team.manageAgentPools) out.add("manage-agent-pools");
  return out;
}

/**
 * N10a: whether a caller holding `callerRights` may mint or read a team's tokens or
 * change its membership — only when the team grants nothing the caller lacks, so no
 * caller gains a right through a team it controls. ADMIN_TOKEN always may (N9).
 */
export function mayDelegateTeam(
  caller: NocodeCaller,
  callerRights: ReadonlySet<OrgPermission>,
  team: Parameters<typeof teamPermissions>[0],
): boolean {
  if (caller.kind === "admin") return true;
  if (!callerRights.has("manage-teams")) return false;
  for (const right of teamPermissions(team)) if (!holdsForDelegation(callerRights, right)) return false;
  return true;
}

/**
 * Whether holding `rights` covers `right` for delegation. `read-upgrades` (E6) shows an
 * upgrade run's status, which `read-workspaces` reads anyway through `GET /runs/:id`:
 * it is no escalation, so the organization token may manage a read-workspaces team, as
 * N10a lists only owners, manage-modules and manage-workspaces teams as out of its reach.
 */
function holdsForDelegation(rights: ReadonlySet<OrgPermission>, right: OrgPermission): boolean {
  return rights.has(right) || (right === "read-upgrades" && rights.has("read-workspaces"));
}

/**
 * The caller's effective rights in `organization` (empty when none): a user's or team's
 * from its teams, the organization token's ORGANIZATION_TOKEN_RIGHTS in its own
 * organization, ADMIN_TOKEN's ADMIN_BOOTSTRAP_RIGHTS.
 */
export async function orgCallerPermissions(
  db: Db,
  caller: NocodeCaller,
  organization: string,
): Promise<Set<OrgPermission>> {
  switch (caller.kind) {
    case "admin":
      return new Set(ADMIN_BOOTSTRAP_RIGHTS);
    case "organization":
      return caller.organization === organization ? new Set(ORGANIZATION_TOKEN_RIGHTS) : new Set();
    case "team": {
      if (caller.organization !== organization) return new Set();
      return new Set(
        await cachedNocode(`perm:team:${caller.teamId}:${organization}`, () =>
          teamRights(db, caller.teamId, organization),
        ),
      );
    }
    case "user":
      if (caller.onlyOrganization !== undefined && caller.onlyOrganization !== organization) return new Set();
      return new Set(
        await cachedNocode(`perm:user:${caller.userId}:${organization}`, () =>
          userRights(db, caller.userId, organization),
        ),
      );
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
): Promise<boolean> {
  return (await orgCallerPermissions(db, caller, organization)).has(permission);
}

/** Throw 404 `not found` unless the caller holds `permission` in `organization` (N2, N10). */
export async function requireOrgPermission(
  db: Db,
  caller: NocodeCaller,
  organization: string,
  permission: OrgPermission,
): Promise<void> {
  if (!(await hasOrgPermission(db, caller, organization, permission))) throw notFound();
}
