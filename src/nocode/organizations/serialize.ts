/** The `organizations` resource (HCP's shape, HCP Terraform's id formats: the name is the id). */
import * as v from "valibot";
import type { OrgPermission } from "../access/permissions";
import { linkAnswer, resourceAnswer, single, timestamp, toOneAnswer } from "../request/answers";
import { isoTime } from "../respond";
import type { OrganizationRow } from "./repo";

/** Serialize an organization; `permissions` describes the caller's rights in it. */
export function serializeOrganization(
  org: OrganizationRow,
  extra: { ownersTeamId?: string; permissions: ReadonlySet<OrgPermission> },
) {
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

/** The caller's rights in the organization, as HCP spells them. */
const ORGANIZATION_PERMISSIONS = [
  "can-update",
  "can-destroy",
  "can-access-via-teams",
  "can-create-team",
  "can-manage-users",
  "can-update-api-token",
  "can-create-workspace",
  "can-create-project",
  "can-create-module",
  "can-manage-no-code-modules",
  "can-deploy-no-code-modules",
  "can-manage-agent-pools",
] as const;

/** B14: the document serializeOrganization renders. */
export const organizationAnswer = single(
  resourceAnswer(
    "organizations",
    {
      name: v.string(),
      email: v.string(),
      "created-at": timestamp,
      "default-execution-mode": v.literal("remote"),
      "collaborator-auth-policy": v.literal("password"),
      "plan-expired": v.literal(false),
      permissions: v.strictObject(
        Object.fromEntries(ORGANIZATION_PERMISSIONS.map((p) => [p, v.boolean()])) as Record<
          (typeof ORGANIZATION_PERMISSIONS)[number],
          v.BooleanSchema<undefined>
        >,
      ),
    },
    {
      "default-project": toOneAnswer("projects"),
      "authentication-token": linkAnswer,
      "owners-team": v.optional(toOneAnswer("teams")),
    },
  ),
);
