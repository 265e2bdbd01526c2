/** The `organizations` resource (HCP's shape, reference §1.2: the name is the id). */
import type { OrgPermission } from "../permissions";
import { isoTime } from "../respond";
import type { OrganizationRow } from "./repo";

/** Serialize an organization; `permissions` describes the caller's rights in it. */
export function serializeOrganization(org: OrganizationRow, extra: { ownersTeamId?: string; permissions: Set<OrgPermission> }) {
  const p = extra.permissions;
  const relationships: Record<string, unknown> = {
    "default-project": { data: { id: org.defaultProjectId, type: "projects" } },
    "authentication-token": { links: { related: `/api/v2/organizations/${org.name}/authentication-token` } },
  };
  if (extra.ownersTeamId) relationships["owners-team"] = { data: { id: extra.ownersTeamId, type: "teams" } };
  return {
    data: {
      id: org.name,
      type: "organizations",
      attributes: {
        name: org.name,
        email: org.email,
        "created-at": isoTime(org.createdAt),
        "default-execution-mode": "remote",
        "collaborator-auth-policy": "password",
        "plan-expired": false,
        permissions: {
          "can-update": p.has("owner"),
          "can-destroy": p.has("owner"),
          "can-access-via-teams": p.has("member"),
          "can-create-team": p.has("manage-teams"),
          "can-manage-users": p.has("manage-teams"),
          "can-update-api-token": p.has("manage-teams"),
          "can-create-workspace": p.has("run-workspaces"),
          "can-create-project": p.has("manage-projects"),
          "can-create-module": p.has("manage-registry-modules"),
          "can-manage-no-code-modules": p.has("manage-no-code-modules"),
          "can-deploy-no-code-modules": p.has("run-workspaces"),
          "can-manage-agent-pools": p.has("manage-agent-pools"),
        },
      },
      relationships,
      links: { self: `/api/v2/organizations/${org.name}` },
    },
  };
}
