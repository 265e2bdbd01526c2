/** The `projects` resource (HCP's shape). */
import * as v from "valibot";
import type { OrgPermission } from "../access/permissions";
import { orNull, resourceAnswer, timestamp, toOneAnswer } from "../request/answers";
import { isoTime } from "../respond";
import type { ProjectRow } from "./repo";

/** Serialize a project; `permissions` are the caller's rights in its organization. */
export function serializeProject(project: ProjectRow, permissions: ReadonlySet<OrgPermission>, isDefault: boolean) {
  const manage = permissions.has("manage-projects");
  return {
    id: project.id,
    type: "projects",
    attributes: {
      name: project.name,
      description: project.description,
      "created-at": isoTime(project.createdAt),
      "is-default": isDefault,
      "default-execution-mode": "remote",
      "auto-destroy-activity-duration": null,
      permissions: {
        "can-read": permissions.has("member"),
        "can-update": manage,
        "can-destroy": manage && !isDefault,
        "can-create-workspace": permissions.has("run-workspaces"),
        "can-deploy-no-code-modules": permissions.has("run-workspaces"),
      },
    },
    relationships: { organization: { data: { id: project.organization, type: "organizations" } } },
    links: { self: `/api/v2/projects/${project.id}` },
  };
}

/** B14: the resource serializeProject renders. */
export const projectAnswer = resourceAnswer(
  "projects",
  {
    name: v.string(),
    description: orNull(v.string()),
    "created-at": timestamp,
    "is-default": v.boolean(),
    "default-execution-mode": v.literal("remote"),
    "auto-destroy-activity-duration": v.null(),
    permissions: v.strictObject({
      "can-read": v.boolean(),
      "can-update": v.boolean(),
      "can-destroy": v.boolean(),
      "can-create-workspace": v.boolean(),
      "can-deploy-no-code-modules": v.boolean(),
    }),
  },
  { organization: toOneAnswer("organizations") },
);
