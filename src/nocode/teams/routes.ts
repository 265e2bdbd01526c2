/**
 * Teams (N9, N10): `POST|GET /organizations/:org/teams`, `GET /teams/:id`,
 * `POST|DELETE /teams/:id/authentication-token`, `POST|DELETE /teams/:id/relationships/users`.
 * Creating teams, team tokens and memberships: ADMIN_TOKEN, owners, or the organization
 * token (`manage-teams`); a team's tokens and membership only when the caller holds every
 * right the team grants (N10a, access/permissions.ts mayDelegateTeam). Reading: any member.
 */
import { type Context, Hono } from "hono";
import * as v from "valibot";
import type { Db } from "../../db/client";
import { insertUnique } from "../../db/unique";
import { mayDelegateTeam } from "../access/permissions";
import type { NocodeEnv } from "../env";
import { invalidAttribute, notFound } from "../errors";
import { newId } from "../ids";
import { findOrganization } from "../organizations/repo";
import { pagedList, single } from "../request/answers";
import {
  identifierListDocument,
  members,
  optionalResourceDocument,
  requiredName,
  resourceDocument,
} from "../request/document";
import { operation } from "../request/operation";
import { pageOf, pageQuery } from "../request/query";
import { jsonApi, jsonApiPage, noContent } from "../respond";
import { rights, scope } from "../route-rights";
import { issueToken, revokeToken, serializeToken, tokenAnswer, tokenCreateAttributes } from "../tokens/api-tokens";
import {
  addMembers,
  findTeam,
  insertTeam,
  listTeams,
  memberIds,
  ORGANIZATION_ACCESS,
  removeMembers,
  resolveUsers,
  type TeamRow,
} from "./repo";
import { serializeTeam, teamAnswer } from "./serialize";

/** Team names: letters, digits, `-`, `_` and `.`, at most 64 characters (our choice). */
export const TEAM_NAME = /^[A-Za-z0-9_.-]+$/;
export const TEAM_NAME_MAX = 64;

export const teamRoutes = new Hono<NocodeEnv>();

/** The team `:id`, for reading: its organization's rights decide. */
const teamById = scope(async (c) => {
  const team = await findTeam(c.var.db, c.req.param("id") ?? "");
  return team && { resource: team, organization: team.organization };
});

/** The team `:id` whose tokens and membership the route manages: N10a's no-escalation rule decides. */
const delegatedTeamById = scope(async (c) => {
  const team = await findTeam(c.var.db, c.req.param("id") ?? "");
  return team && { resource: team, team };
});

/** `organization-access`: the flags we model; keys HCP has and we do not (manage-policies, …) are ignored, as clients send them. */
const organizationAccessAttribute = v.optional(
  v.nullable(
    members(
      Object.fromEntries(
        Object.keys(ORGANIZATION_ACCESS).map((key) => [
          key,
          v.optional(v.nullable(v.boolean(`Organization access ${key} must be true or false`))),
        ]),
      ) as Record<
        keyof typeof ORGANIZATION_ACCESS,
        v.OptionalSchema<v.NullableSchema<v.BooleanSchema<string>, undefined>, undefined>
      >,
      "Organization access must be an object",
      () => "Organization access must be an object",
    ),
  ),
);

const teamCreate = operation({
  tag: "teams",
  summary: "Create a team (manage-teams: N9, N10)",
  body: resourceDocument({
    types: ["teams", "team"],
    attributes: {
      name: requiredName(
        "name",
        TEAM_NAME_MAX,
        TEAM_NAME,
        "Name may only contain letters, numbers, dashes (-), underscores (_), and periods (.)",
      ),
      "organization-access": organizationAccessAttribute,
    },
  }),
  answers: { 201: { description: "The team", schema: single(teamAnswer) } },
});

teamRoutes.post("/organizations/:org/teams", rights({ right: "manage-teams" }), teamCreate, async (c) => {
  const db = c.var.db;
  const organization = c.req.param("org");
  if (!(await findOrganization(db, organization))) throw notFound();
  const { name, "organization-access": requested } = (await teamCreate.body(c)).data.attributes;
  const access: Partial<Record<(typeof ORGANIZATION_ACCESS)[keyof typeof ORGANIZATION_ACCESS], boolean>> = {};
  for (const [key, column] of Object.entries(ORGANIZATION_ACCESS)) {
    const value = requested?.[key as keyof typeof ORGANIZATION_ACCESS];
    if (typeof value === "boolean") access[column] = value;
  }

  const team: TeamRow = {
    id: newId("team"),
    organization,
    name,
    manageWorkspaces: access.manageWorkspaces ?? false,
    manageProjects: access.manageProjects ?? false,
    manageModules: access.manageModules ?? false,
    manageAgentPools: access.manageAgentPools ?? false,
    readWorkspaces: access.readWorkspaces ?? false,
    readProjects: access.readProjects ?? false,
    createdAt: Date.now(),
  };
  await insertUnique(insertTeam(db, team), () => invalidAttribute("name", "Name has already been taken"));
  return jsonApi(
    {
      data: serializeTeam(team, [], mayDelegateTeam(c.var.caller, c.var.orgRights, team)),
    },
    201,
  );
});

const teamList = operation({
  tag: "teams",
  summary: "List an organization's teams (members)",
  query: pageQuery,
  answers: { 200: { description: "One page of teams", schema: pagedList(teamAnswer) } },
});

teamRoutes.get("/organizations/:org/teams", rights({ right: "member" }), teamList, async (c) => {
  const db = c.var.db;
  const organization = c.req.param("org");
  const rights = c.var.orgRights;
  const page = pageOf(teamList.query(c));
  const listed = await listTeams(db, organization, page);
  const members = await memberIds(
    db,
    listed.rows.map((t) => t.id),
  );
  return jsonApiPage(c.req.url, page, listed, (t) =>
    serializeTeam(t, members.get(t.id) ?? [], mayDelegateTeam(c.var.caller, rights, t)),
  );
});

const teamShow = operation({
  tag: "teams",
  summary: "Show a team (members)",
  answers: { 200: { description: "The team", schema: single(teamAnswer) } },
});

teamRoutes.get("/teams/:id", rights({ right: "member" }, { scope: teamById }), teamShow, async (c) => {
  const db = c.var.db;
  const team = teamById.of(c);
  const rights = c.var.orgRights;
  const members = await memberIds(db, [team.id]);
  return jsonApi({
    data: serializeTeam(team, members.get(team.id) ?? [], mayDelegateTeam(c.var.caller, rights, team)),
  });
});

const teamTokenCreate = operation({
  tag: "teams",
  summary: "Issue the team token, replacing the previous one (N9, N10a)",
  body: optionalResourceDocument({
    types: ["authentication-tokens", "authentication-token"],
    attributes: tokenCreateAttributes,
  }),
  answers: { 201: { description: "The new token; `token` is shown only here", schema: tokenAnswer } },
});

teamRoutes.post(
  "/teams/:id/authentication-token",
  rights({ right: "manage-teams", team: "delegate" }, { scope: delegatedTeamById }),
  teamTokenCreate,
  async (c) => {
    const db = c.var.db;
    const team = delegatedTeamById.of(c);
    const expiredAt = (await teamTokenCreate.body(c)).data?.attributes["expired-at"] ?? null;
    const { token, row } = await issueToken(
      c.env,
      db,
      { kind: "team", teamId: team.id, organization: team.organization },
      null,
      expiredAt,
    );
    return jsonApi(serializeToken(row, token), 201);
  },
);

const teamTokenDelete = operation({
  tag: "teams",
  summary: "Revoke the team token (N10a)",
  answers: { 204: { description: "Revoked" } },
});

teamRoutes.delete(
  "/teams/:id/authentication-token",
  rights({ right: "manage-teams", team: "delegate" }, { scope: delegatedTeamById }),
  teamTokenDelete,
  async (c) => {
    const db = c.var.db;
    const team = delegatedTeamById.of(c);
    if (!(await revokeToken(db, "team", team.id))) throw notFound();
    return noContent();
  },
);

/** The users a membership change names, by id or username (N9). */
const membershipDocument = identifierListDocument(["users", "user"]);

const membershipAdd = operation({
  tag: "teams",
  summary: "Add users to a team (N10a); every named user must exist, else 404 and nothing changes",
  body: membershipDocument,
  answers: { 204: { description: "Added" } },
});

const membershipRemove = operation({
  tag: "teams",
  summary: "Remove users from a team (N10a); every named user must exist, else 404 and nothing changes",
  body: membershipDocument,
  answers: { 204: { description: "Removed" } },
});

/** Membership changes: every named user must exist (else 404 and nothing changes). */
async function membershipChange(
  c: Context<NocodeEnv>,
  described: typeof membershipAdd,
  apply: (db: Db, teamId: string, userIds: string[]) => Promise<void>,
) {
  const db = c.var.db;
  const team = delegatedTeamById.of(c);
  const names = (await described.body(c)).data.map((member) => member.id);
  const { ids, missing } = await resolveUsers(db, names);
  if (missing.length > 0) throw notFound();
  await apply(db, team.id, ids);
  return noContent();
}

teamRoutes.post(
  "/teams/:id/relationships/users",
  rights({ right: "manage-teams", team: "delegate" }, { scope: delegatedTeamById }),
  membershipAdd,
  (c) => membershipChange(c, membershipAdd, addMembers),
);
teamRoutes.delete(
  "/teams/:id/relationships/users",
  rights({ right: "manage-teams", team: "delegate" }, { scope: delegatedTeamById }),
  membershipRemove,
  (c) => membershipChange(c, membershipRemove, removeMembers),
);
