/**
 * Teams (N9, N10): `POST|GET /organizations/:org/teams`, `GET /teams/:id`,
 * `POST|DELETE /teams/:id/authentication-token`, `POST|DELETE /teams/:id/relationships/users`.
 * Creating teams, team tokens and memberships: ADMIN_TOKEN, owners, or the organization
 * token (`manage-teams`); a team's tokens and membership only when the caller holds every
 * right the team grants (N10a, permissions.ts mayDelegateTeam). Reading: any member.
 */
import { Hono } from "hono";
import { createDb, type Db } from "../../db/client";
import { teams } from "../../db/schema";
import { isUniqueViolation } from "../../db/errors";
import type { NocodeCaller } from "../auth";
import type { NocodeEnv } from "../env";
import { invalidAttribute, notFound } from "../errors";
import { newId } from "../ids";
import { FieldErrors, pageDocument, pageRequest, readIdentifiers, readResource } from "../jsonapi";
import { findOrganization } from "../organizations/repo";
import { hasOrgPermission, mayDelegateTeam, orgCallerPermissions, type OrgPermission } from "../permissions";
import { rights } from "../route-rights";
import { jsonApi, noContent } from "../respond";
import { issueToken, readExpiredAt, revokeToken, serializeToken } from "../api-tokens";
import { addMembers, findTeam, listTeams, memberIds, ORGANIZATION_ACCESS, removeMembers, resolveUsers, type TeamRow } from "./repo";
import { serializeTeam } from "./serialize";

/** Team names: letters, digits, `-`, `_` and `.`, at most 64 characters (our choice). */
export const TEAM_NAME = /^[A-Za-z0-9_.-]+$/;
export const TEAM_NAME_MAX = 64;

export const teamRoutes = new Hono<NocodeEnv>();

/** N9: ADMIN_TOKEN, an owner, or the organization token (`manage-teams`) may create teams. */
function canManageTeams(db: Db, caller: NocodeCaller, organization: string): Promise<boolean> {
  return hasOrgPermission(db, caller, organization, "manage-teams");
}

/** The team `id` when the caller may manage its tokens and membership (else 404, N10, N10a). */
export async function manageableTeam(db: Db, caller: NocodeCaller, id: string): Promise<TeamRow> {
  const team = await findTeam(db, id);
  if (!team || !mayDelegateTeam(caller, await orgCallerPermissions(db, caller, team.organization), team)) throw notFound();
  return team;
}

teamRoutes.post("/organizations/:org/teams", rights({ right: "manage-teams" }), async (c) => {
  const db = createDb(c.env.DB);
  const organization = c.req.param("org");
  if (!(await findOrganization(db, organization)) || !(await canManageTeams(db, c.var.caller, organization))) throw notFound();
  const input = await readResource(c.req.raw, ["teams", "team"]);
  const errors = new FieldErrors();
  const name = errors.required(input.attributes, "name");
  if (name !== undefined) {
    if (name.length > TEAM_NAME_MAX) errors.add("name", `Name is too long (maximum is ${TEAM_NAME_MAX} characters)`);
    else if (!TEAM_NAME.test(name)) errors.add("name", "Name may only contain letters, numbers, dashes (-), underscores (_), and periods (.)");
  }
  const access: Partial<Record<(typeof ORGANIZATION_ACCESS)[keyof typeof ORGANIZATION_ACCESS], boolean>> = {};
  const rawAccess = input.attributes["organization-access"];
  if (rawAccess !== undefined && rawAccess !== null) {
    if (typeof rawAccess !== "object" || Array.isArray(rawAccess)) {
      errors.add("organization-access", "Organization access must be an object");
    } else {
      // Keys HCP has and we do not model (manage-policies, …) are ignored, as clients send them.
      for (const [key, column] of Object.entries(ORGANIZATION_ACCESS)) {
        const value = (rawAccess as Record<string, unknown>)[key];
        if (value === undefined || value === null) continue;
        if (typeof value !== "boolean") errors.add(`organization-access/${key}`, `Organization access ${key} must be true or false`);
        else access[column] = value;
      }
    }
  }
  errors.throwIfAny();

  const team: TeamRow = {
    id: newId("team"),
    organization,
    name: name!,
    manageWorkspaces: access.manageWorkspaces ?? false,
    manageProjects: access.manageProjects ?? false,
    manageModules: access.manageModules ?? false,
    manageAgentPools: access.manageAgentPools ?? false,
    readWorkspaces: access.readWorkspaces ?? false,
    readProjects: access.readProjects ?? false,
    createdAt: Date.now(),
  };
  try {
    await db.insert(teams).values(team);
  } catch (err) {
    if (isUniqueViolation(err)) throw invalidAttribute("name", "Name has already been taken");
    throw err;
  }
  return jsonApi({ data: serializeTeam(team, [], mayDelegateTeam(c.var.caller, await callerRights(db, c.var.caller, organization), team)) }, 201);
});

async function callerRights(db: Db, caller: NocodeCaller, organization: string): Promise<Set<OrgPermission>> {
  return orgCallerPermissions(db, caller, organization);
}

teamRoutes.get("/organizations/:org/teams", rights({ right: "member" }), async (c) => {
  const db = createDb(c.env.DB);
  const organization = c.req.param("org");
  const rights = await callerRights(db, c.var.caller, organization);
  if (!rights.has("member")) throw notFound();
  const url = new URL(c.req.url);
  const page = pageRequest(url);
  const { rows, total } = await listTeams(db, organization, page);
  const members = await memberIds(db, rows.map((t) => t.id));
  return jsonApi({ data: rows.map((t) => serializeTeam(t, members.get(t.id) ?? [], mayDelegateTeam(c.var.caller, rights, t))), ...pageDocument(url, page, total) });
});

teamRoutes.get("/teams/:id", rights({ right: "member" }), async (c) => {
  const db = createDb(c.env.DB);
  const team = await findTeam(db, c.req.param("id"));
  if (!team) throw notFound();
  const rights = await callerRights(db, c.var.caller, team.organization);
  if (!rights.has("member")) throw notFound();
  const members = await memberIds(db, [team.id]);
  return jsonApi({ data: serializeTeam(team, members.get(team.id) ?? [], mayDelegateTeam(c.var.caller, rights, team)) });
});

teamRoutes.post("/teams/:id/authentication-token", rights({ right: "manage-teams", team: "delegate" }), async (c) => {
  const db = createDb(c.env.DB);
  const team = await manageableTeam(db, c.var.caller, c.req.param("id"));
  const input = await readResource(c.req.raw, ["authentication-tokens", "authentication-token"], { optional: true });
  const errors = new FieldErrors();
  const expiredAt = readExpiredAt(errors, input.attributes, Date.now());
  errors.throwIfAny();
  const { token, row } = await issueToken(c.env, db, { kind: "team", teamId: team.id, organization: team.organization }, null, expiredAt);
  return jsonApi(serializeToken(row, token), 201);
});

teamRoutes.delete("/teams/:id/authentication-token", rights({ right: "manage-teams", team: "delegate" }), async (c) => {
  const db = createDb(c.env.DB);
  const team = await manageableTeam(db, c.var.caller, c.req.param("id"));
  if (!(await revokeToken(db, "team", team.id))) throw notFound();
  return noContent();
});

/** Membership changes: every named user must exist (else 404 and nothing changes). */
async function membershipChange(c: { env: Env; var: NocodeEnv["Variables"]; req: { param(name: "id"): string; raw: Request } }, apply: (db: Db, teamId: string, userIds: string[]) => Promise<void>) {
  const db = createDb(c.env.DB);
  const team = await manageableTeam(db, c.var.caller, c.req.param("id"));
  const names = await readIdentifiers(c.req.raw, ["users", "user"]);
  const { ids, missing } = await resolveUsers(db, names);
  if (missing.length > 0) throw notFound();
  await apply(db, team.id, ids);
  return noContent();
}

teamRoutes.post("/teams/:id/relationships/users", rights({ right: "manage-teams", team: "delegate" }), (c) => membershipChange(c, addMembers));
teamRoutes.delete("/teams/:id/relationships/users", rights({ right: "manage-teams", team: "delegate" }), (c) => membershipChange(c, removeMembers));
