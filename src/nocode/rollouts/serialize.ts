/**
 * The `upgrade-rollouts` resource (decision N15): the rollout's settings and status, and
 * its per-workspace items (workspace, run, status, reason, plan counts) as the attribute
 * `items`, in rollout order with their batch number (1-based, as the console shows them).
 */
import { isoTime } from "../respond";
import type { RolloutItemRow, RolloutRow } from "./repo";

/** The JSON:API resource of a rollout. */
export function rolloutResource(rollout: RolloutRow, items: readonly RolloutItemRow[]) {
  return {
    id: rollout.id,
    type: "upgrade-rollouts",
    attributes: {
      status: rollout.status,
      reason: rollout.reason,
      "batch-size": rollout.batchSize,
      "auto-confirm": rollout.autoConfirm,
      "max-failures": rollout.maxFailures,
      "target-version": rollout.targetVersion,
      "current-batch": rollout.currentBatch + 1,
      "batch-count": items.length === 0 ? 0 : Math.max(...items.map((i) => i.batch)) + 1,
      "created-at": isoTime(rollout.createdAt),
      "updated-at": isoTime(rollout.updatedAt),
      items: items.map((item) => ({
        workspace: item.workspaceId,
        run: item.runId,
        batch: item.batch + 1,
        status: item.status,
        reason: item.reason,
        "resource-additions": item.additions,
        "resource-changes": item.changes,
        "resource-destructions": item.destructions,
      })),
    },
    relationships: {
      "no-code-module": { data: { id: rollout.noCodeModuleId, type: "no-code-modules" } },
      workspaces: { data: items.map((i) => ({ id: i.workspaceId, type: "workspaces" })) },
    },
    links: { self: `/api/v2/upgrade-rollouts/${rollout.id}` },
  };
}
