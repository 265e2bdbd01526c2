/**
 * The `workspace-upgrade` document of E5 and E6 (HCP Terraform's no-code provisioning API (E5): the id is the
 * run id, attributes `status` and `plan-url`, relationship `workspace`), and the
 * absolute `plan-url` of decision N8.
 */
import * as v from "valibot";
import { signViewToken } from "../plan-page/view-token";
import { single, toOneAnswer } from "../request/answers";
import { RUN_STATUSES } from "../runs/repo";

/** Path of a run's plan page (N8), without origin or token. */
export function planPagePath(organization: string, workspaceName: string, runId: string): string {
  return `/app/${encodeURIComponent(organization)}/workspaces/${encodeURIComponent(workspaceName)}/runs/${encodeURIComponent(runId)}`;
}

/**
 * N8: `<origin>/app/<org>/workspaces/<name>/runs/<run-id>?view=<signed token valid 24 h>`.
 * Each call signs a fresh token (E6 hands out one valid 24 h from the poll).
 */
export async function planUrl(
  env: Pick<Env, "KEYWAY_HASH_KEY">,
  origin: string,
  workspace: { organization: string; name: string },
  runId: string,
  now = Date.now(),
): Promise<string> {
  const token = await signViewToken(env.KEYWAY_HASH_KEY, runId, now);
  return `${origin}${planPagePath(workspace.organization, workspace.name, runId)}?view=${token}`;
}

const workspaceRelationship = (workspaceId: string) => ({
  workspace: { data: { id: workspaceId, type: "workspaces" } },
});

/**
 * N19: the status E5 and E6 show for an upgrade run. A run queued for an agent
 * (`pending`, `plan_queued`) reads `pending`; every other status is the run's own
 * (`planning`, `planned`, then the apply's; `errored`, `canceled`, `discarded` only when
 * the upgrade failed or was given up).
 */
export function upgradeStatusOf(status: string): string {
  return status === "plan_queued" ? "pending" : status;
}

/** A `workspace-upgrade` resource for an upgrade run. */
export function workspaceUpgradeResource(run: { id: string; status: string }, workspaceId: string, url: string) {
  return {
    id: run.id,
    type: "workspace-upgrade",
    attributes: { status: upgradeStatusOf(run.status), "plan-url": url },
    relationships: workspaceRelationship(workspaceId),
  };
}

/**
 * N8: the answer of an E5 with nothing to upgrade: a `workspace-upgrade` with only a
 * `message` (HCP Terraform's no-code provisioning API (E5): no `status`, no `plan-url`) and no id, since no run exists.
 */
export function noUpgradeResource(workspaceId: string, message: string) {
  return { type: "workspace-upgrade", attributes: { message }, relationships: workspaceRelationship(workspaceId) };
}

/** E7's plain-text answer (N8; HCP Terraform's no-code provisioning API (E7)). */
export const WORKSPACE_UPDATE_COMPLETED = "Workspace update completed";

/** B14: E5's and E6's answer for an upgrade run (workspaceUpgradeResource). */
export const workspaceUpgradeAnswer = single(
  v.strictObject({
    id: v.string(),
    type: v.literal("workspace-upgrade"),
    attributes: v.strictObject({
      status: v.picklist(RUN_STATUSES.filter((s) => s !== "plan_queued")),
      "plan-url": v.pipe(v.string(), v.url()),
    }),
    relationships: v.strictObject({ workspace: toOneAnswer("workspaces") }),
  }),
);

/** B14: E5's answer when there is nothing to upgrade (noUpgradeResource: no id, no run). */
export const noUpgradeAnswer = single(
  v.strictObject({
    type: v.literal("workspace-upgrade"),
    attributes: v.strictObject({ message: v.string() }),
    relationships: v.strictObject({ workspace: toOneAnswer("workspaces") }),
  }),
);
