/**
 * The `workspaces` document (seed §2; reference §4): every attribute and relationship of
 * HCP Terraform's no-code workspace, `engine-version` under both names (N6), `source`
 * `tfe-module`, `source-module-id`, `no-code-upgrade-available` (N8) and the caller's
 * `permissions` (N10).
 */
import type { OrgPermission } from "../permissions";
import { isoTime } from "../respond";
import type { WorkspaceRow } from "./repo";

const API = "/api/v2";

/** `/api/v2/organizations/<org>/workspaces/<name>` (reference §1.4). */
export function workspacePath(ws: Pick<WorkspaceRow, "organization" | "name">): string {
  return `${API}/organizations/${encodeURIComponent(ws.organization)}/workspaces/${encodeURIComponent(ws.name)}`;
}

/** What the serializer needs besides the row. */
export interface WorkspaceContext {
  /** The caller's rights in the organization (N10). */
  rights: ReadonlySet<OrgPermission>;
  /** Ids of the workspace's vars. */
  varIds: readonly string[];
  /** N8. */
  noCodeUpgradeAvailable: boolean;
}

/** The `permissions` object: the caller's rights on the workspace (N10). */
export function workspacePermissions(rights: ReadonlySet<OrgPermission>) {
  const read = rights.has("read-workspaces");
  const manage = rights.has("write-vars");
  const run = rights.has("run-workspaces");
  return {
    "can-update": manage,
    "can-destroy": manage,
    "can-queue-run": run,
    "can-read-run": read,
    "can-read-variable": read,
    "can-update-variable": manage,
    "can-read-state-versions": read,
    "can-read-state-outputs": read,
    "can-create-state-versions": manage,
    "can-queue-apply": run,
    "can-lock": manage,
    "can-unlock": manage,
    "can-force-unlock": manage,
    "can-read-settings": read,
    "can-manage-tags": manage,
    "can-manage-run-tasks": manage,
    "can-force-delete": manage,
    "can-manage-assessments": manage,
    "can-manage-ephemeral-workspaces": manage,
    "can-read-assessment-results": read,
    "can-queue-destroy": run,
  };
}

const related = (type: string, id: string | null, link?: string) => {
  const out: Record<string, unknown> = { data: id === null ? null : { id, type } };
  if (link && id !== null) out.links = { related: link };
  return out;
};

/** A `workspaces` resource object. */
export function workspaceResource(ws: WorkspaceRow, ctx: WorkspaceContext) {
  const path = workspacePath(ws);
  return {
    id: ws.id,
    type: "workspaces",
    attributes: {
      "allow-destroy-plan": true,
      "auto-apply": ws.autoApply,
      "auto-apply-run-trigger": false,
      "auto-destroy-at": null,
      "auto-destroy-status": null,
      "auto-destroy-activity-duration": null,
      "inherits-project-auto-destroy": true,
      "created-at": isoTime(ws.createdAt),
      "updated-at": isoTime(ws.updatedAt),
      environment: "default",
      locked: ws.locked,
      "locked-reason": "",
      name: ws.name,
      "queue-all-runs": false,
      "speculative-enabled": true,
      "structured-run-output-enabled": true,
      // N6: echoed as given; HCP calls it terraform-version, the seed engine-version.
      "terraform-version": ws.engineVersion,
      "engine-version": ws.engineVersion,
      "working-directory": null,
      "global-remote-state": false,
      "project-remote-state": false,
      "resource-count": ws.resourceCount,
      "apply-duration-average": null,
      "plan-duration-average": null,
      "policy-check-failures": null,
      "run-failures": null,
      "workspace-kpis-runs-count": null,
      "latest-change-at": ws.latestChangeAt === null ? null : isoTime(ws.latestChangeAt),
      operations: true,
      "execution-mode": ws.executionMode,
      "setting-overwrites": { "execution-mode": ws.executionModeSet, "agent-pool": ws.agentPoolId !== null },
      "vcs-repo": null,
      "vcs-repo-identifier": null,
      permissions: workspacePermissions(ctx.rights),
      actions: { "is-destroyable": ws.resourceCount === 0 },
      description: ws.description,
      "file-triggers-enabled": true,
      "trigger-prefixes": [],
      "trigger-patterns": [],
      "assessments-enabled": false,
      "last-assessment-result-at": null,
      source: ws.source,
      "source-name": ws.sourceName,
      "source-url": ws.sourceUrl,
      "source-module-id": ws.sourceModuleId,
      "no-code-upgrade-available": ctx.noCodeUpgradeAvailable,
      "tag-names": [],
    },
    relationships: {
      organization: related("organizations", ws.organization, `${API}/organizations/${encodeURIComponent(ws.organization)}`),
      "current-run": related("runs", ws.currentRunId, ws.currentRunId ? `${API}/runs/${ws.currentRunId}` : undefined),
      "latest-run": related("runs", ws.latestRunId, ws.latestRunId ? `${API}/runs/${ws.latestRunId}` : undefined),
      outputs: { data: [] },
      "remote-state-consumers": { links: { related: `${API}/workspaces/${ws.id}/relationships/remote-state-consumers` } },
      "current-state-version": related(
        "state-versions",
        ws.currentStateVersionId,
        ws.currentStateVersionId ? `${API}/state-versions/${ws.currentStateVersionId}` : undefined,
      ),
      "current-configuration-version": related(
        "configuration-versions",
        ws.currentConfigurationVersionId,
        ws.currentConfigurationVersionId ? `${API}/configuration-versions/${ws.currentConfigurationVersionId}` : undefined,
      ),
      "agent-pool": related("agent-pools", ws.agentPoolId),
      readme: { data: null },
      project: related("projects", ws.projectId),
      "current-assessment-result": { data: null },
      "no-code-module-version": related("no-code-module-versions", ws.noCodeModuleVersionId),
      vars: { data: ctx.varIds.map((id) => ({ id, type: "vars" })) },
    },
    links: { self: path, "self-html": `/app/${encodeURIComponent(ws.organization)}/workspaces/${encodeURIComponent(ws.name)}` },
  };
}
