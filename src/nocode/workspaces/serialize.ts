/**
 * The `workspaces` document (HCP Terraform's workspace document): every attribute and relationship of
 * HCP Terraform's no-code workspace, `engine-version` under both names (N6), `source`
 * `tfe-module`, `source-module-id`, `no-code-upgrade-available` (N8) and the caller's
 * `permissions` (N10).
 */
import * as v from "valibot";
import type { OrgPermission } from "../access/permissions";
import {
  identifierOf,
  linkAnswer,
  orNull,
  pagedList,
  single,
  timestamp,
  toManyAnswer,
  toOneAnswer,
} from "../request/answers";
import { isoTime } from "../respond";
import { runAnswer } from "../runs/serialize";
import type { WorkspaceRow } from "./repo";

const API = "/api/v2";

/** `/api/v2/organizations/<org>/workspaces/<name>` (HCP Terraform's pagination). */
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
  /** N20: the run holding the workspace's lock (from `planning` to its end), if any. */
  lockingRunId?: string | null;
}

/** N20: who holds the workspace's lock: its user or team (a user's lock), else the run holding it, else null. */
function lockedBy(ws: WorkspaceRow, lockingRunId: string | null) {
  if (ws.lockedBy) {
    const [kind, id] = ws.lockedBy.split(":", 2) as [string, string];
    return { id, type: kind === "team" ? "teams" : "users" };
  }
  return lockingRunId ? { id: lockingRunId, type: "runs" } : null;
}

/** The `permissions` object: the caller's rights on the workspace (N10). */
export function workspacePermissions(rights: ReadonlySet<OrgPermission>) {
  const read = rights.has("read-workspaces");
  const manage = rights.has("write-vars");
  const run = rights.has("run-workspaces");
  const owner = rights.has("owner");
  return {
    "can-update": manage,
    "can-destroy": manage,
    "can-queue-run": run,
    "can-read-run": read,
    "can-read-variable": read,
    "can-update-variable": manage,
    // N20: raw state (the download) needs manage-workspaces as a user or team; outputs read-workspaces.
    "can-read-state-versions": run,
    "can-read-state-outputs": read,
    "can-create-state-versions": owner,
    "can-queue-apply": run,
    "can-lock": run,
    "can-unlock": run,
    "can-force-unlock": owner,
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
      // N20: a user's or team's lock, or a run's (from planning to its end).
      locked: lockedBy(ws, ctx.lockingRunId ?? null) !== null,
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
      organization: related(
        "organizations",
        ws.organization,
        `${API}/organizations/${encodeURIComponent(ws.organization)}`,
      ),
      "current-run": related("runs", ws.currentRunId, ws.currentRunId ? `${API}/runs/${ws.currentRunId}` : undefined),
      "latest-run": related("runs", ws.latestRunId, ws.latestRunId ? `${API}/runs/${ws.latestRunId}` : undefined),
      outputs: { data: [] },
      "remote-state-consumers": {
        links: { related: `${API}/workspaces/${ws.id}/relationships/remote-state-consumers` },
      },
      "current-state-version": related(
        "state-versions",
        ws.currentStateVersionId,
        ws.currentStateVersionId ? `${API}/state-versions/${ws.currentStateVersionId}` : undefined,
      ),
      "current-configuration-version": related(
        "configuration-versions",
        ws.currentConfigurationVersionId,
        ws.currentConfigurationVersionId
          ? `${API}/configuration-versions/${ws.currentConfigurationVersionId}`
          : undefined,
      ),
      "agent-pool": related("agent-pools", ws.agentPoolId),
      readme: { data: null },
      project: related("projects", ws.projectId),
      "current-assessment-result": { data: null },
      "no-code-module-version": related("no-code-module-versions", ws.noCodeModuleVersionId),
      vars: { data: ctx.varIds.map((id) => ({ id, type: "vars" })) },
      "locked-by": { data: lockedBy(ws, ctx.lockingRunId ?? null) },
    },
    links: {
      self: path,
      "self-html": `/app/${encodeURIComponent(ws.organization)}/workspaces/${encodeURIComponent(ws.name)}`,
    },
  };
}

/** B14: the schema of {@link workspacePermissions}. */
const workspacePermissionsAnswer = v.strictObject(
  Object.fromEntries(Object.keys(workspacePermissions(new Set())).map((name) => [name, v.boolean()])) as Record<
    string,
    v.BooleanSchema<undefined>
  >,
);

/** B14: the schema of {@link workspaceResource} in answers. */
const workspaceAnswer = v.strictObject({
  id: v.string(),
  type: v.literal("workspaces"),
  attributes: v.strictObject({
    "allow-destroy-plan": v.boolean(),
    "auto-apply": v.boolean(),
    "auto-apply-run-trigger": v.boolean(),
    "auto-destroy-at": v.null(),
    "auto-destroy-status": v.null(),
    "auto-destroy-activity-duration": v.null(),
    "inherits-project-auto-destroy": v.boolean(),
    "created-at": timestamp,
    "updated-at": timestamp,
    environment: v.string(),
    locked: v.boolean(),
    "locked-reason": v.string(),
    name: v.string(),
    "queue-all-runs": v.boolean(),
    "speculative-enabled": v.boolean(),
    "structured-run-output-enabled": v.boolean(),
    "terraform-version": v.string(),
    "engine-version": v.string(),
    "working-directory": v.null(),
    "global-remote-state": v.boolean(),
    "project-remote-state": v.boolean(),
    "resource-count": v.number(),
    "apply-duration-average": v.null(),
    "plan-duration-average": v.null(),
    "policy-check-failures": v.null(),
    "run-failures": v.null(),
    "workspace-kpis-runs-count": v.null(),
    "latest-change-at": orNull(timestamp),
    operations: v.boolean(),
    "execution-mode": v.picklist(["remote", "agent"]),
    "setting-overwrites": v.strictObject({ "execution-mode": v.boolean(), "agent-pool": v.boolean() }),
    "vcs-repo": v.null(),
    "vcs-repo-identifier": v.null(),
    permissions: workspacePermissionsAnswer,
    actions: v.strictObject({ "is-destroyable": v.boolean() }),
    description: orNull(v.string()),
    "file-triggers-enabled": v.boolean(),
    "trigger-prefixes": v.array(v.string()),
    "trigger-patterns": v.array(v.string()),
    "assessments-enabled": v.boolean(),
    "last-assessment-result-at": v.null(),
    source: v.string(),
    "source-name": orNull(v.string()),
    "source-url": orNull(v.string()),
    "source-module-id": orNull(v.string()),
    "no-code-upgrade-available": v.boolean(),
    "tag-names": v.array(v.string()),
  }),
  relationships: v.strictObject({
    organization: toOneAnswer("organizations"),
    "current-run": toOneAnswer("runs"),
    "latest-run": toOneAnswer("runs"),
    outputs: v.strictObject({ data: v.array(identifierOf("workspace-outputs")) }),
    "remote-state-consumers": linkAnswer,
    "current-state-version": toOneAnswer("state-versions"),
    "current-configuration-version": toOneAnswer("configuration-versions"),
    "agent-pool": toOneAnswer("agent-pools"),
    readme: v.strictObject({ data: v.null() }),
    project: toOneAnswer("projects"),
    "current-assessment-result": v.strictObject({ data: v.null() }),
    "no-code-module-version": toOneAnswer("no-code-module-versions"),
    vars: toManyAnswer("vars"),
    "locked-by": v.strictObject({
      data: v.nullable(v.strictObject({ id: v.string(), type: v.picklist(["users", "teams", "runs"]) })),
    }),
  }),
  links: v.strictObject({ self: v.string(), "self-html": v.string() }),
});

/** B14: a document of one workspace. */
export const workspaceDocumentAnswer = single(workspaceAnswer);

/** B14: the schema of `varResource` (./vars.ts) in answers. */
const varAnswer = v.strictObject({
  id: v.string(),
  type: v.literal("vars"),
  attributes: v.strictObject({
    key: v.string(),
    value: orNull(v.string()),
    sensitive: v.boolean(),
    category: v.picklist(["engine", "env"]),
    hcl: v.boolean(),
    "created-at": timestamp,
    description: orNull(v.string()),
    "version-id": v.string(),
  }),
  relationships: v.strictObject({
    configurable: v.strictObject({ data: identifierOf("workspaces"), links: v.strictObject({ related: v.string() }) }),
  }),
  links: v.strictObject({ self: v.string() }),
});

/** B14: a document of one var. */
export const varDocumentAnswer = single(varAnswer);

/** B14: a workspace's vars (all of them, not paged). */
export const varListAnswer = v.strictObject({ data: v.array(varAnswer) });

/** B14: a page of a workspace's runs. */
export const runListAnswer = pagedList(runAnswer);
