/** The `teams` resource (HCP's shape). */
import * as v from "valibot";
import { OWNERS_TEAM } from "../access/permissions";
import { linkAnswer, resourceAnswer, toManyAnswer, toOneAnswer } from "../request/answers";
import { ORGANIZATION_ACCESS, type TeamRow } from "./repo";

/** The `organization-access` object: the owners team has every right (N10). */
export function organizationAccess(team: TeamRow): Record<string, boolean> {
  const owners = team.name === OWNERS_TEAM;
  const out: Record<string, boolean> = {};
  for (const [name, column] of Object.entries(ORGANIZATION_ACCESS)) out[name] = owners || team[column];
  return out;
}

/** Serialize a team; `canManage`: the caller may manage its tokens and membership (N10a). */
export function serializeTeam(team: TeamRow, members: string[], canManage: boolean) {
  return {
    id: team.id,
    type: "teams",
    attributes: {
      name: team.name,
      "users-count": members.length,
      visibility: "organization",
      "allow-member-token-management": true,
      "organization-access": organizationAccess(team),
      permissions: {
        "can-update-membership": canManage,
        "can-destroy": false,
        "can-update-organization-access": false,
        "can-update-api-token": canManage,
        "can-update-visibility": false,
      },
    },
    relationships: {
      organization: { data: { id: team.organization, type: "organizations" } },
      users: { data: members.map((id) => ({ id, type: "users" })) },
      "authentication-token": { links: { related: `/api/v2/teams/${team.id}/authentication-token` } },
    },
    links: { self: `/api/v2/teams/${team.id}` },
  };
}

/** B14: the resource serializeTeam renders. */
export const teamAnswer = resourceAnswer(
  "teams",
  {
    name: v.string(),
    "users-count": v.number(),
    visibility: v.literal("organization"),
    "allow-member-token-management": v.literal(true),
    "organization-access": v.strictObject(
      Object.fromEntries(Object.keys(ORGANIZATION_ACCESS).map((key) => [key, v.boolean()])),
    ),
    permissions: v.strictObject({
      "can-update-membership": v.boolean(),
      "can-destroy": v.boolean(),
      "can-update-organization-access": v.boolean(),
      "can-update-api-token": v.boolean(),
      "can-update-visibility": v.boolean(),
    }),
  },
  { organization: toOneAnswer("organizations"), users: toManyAnswer("users"), "authentication-token": linkAnswer },
);
