/** The `projects` resource (HCP's shape). */
import type { OrgPermission } from "../permissions";
import { isoTime } from "../respond";
import type { ProjectRow } from "./repo";

/** Serialize a project; `permissions` are the caller's rights in its organization. */
export function serializeProject(project: ProjectRow, permissions: Set<OrgPermission>, isDefault: boolean) {
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
