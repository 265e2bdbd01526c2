/** The `teams` resource (HCP's shape). */
import { OWNERS_TEAM } from "../permissions";
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
