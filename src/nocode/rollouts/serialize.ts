/**
 * The `upgrade-rollouts` resource (decision N15): the rollout's settings and status, and
 * its per-workspace items (workspace, run, status, reason, plan counts) as the attribute
 * `items`, in rollout order with their batch number (1-based, as the console shows them).
 */
import * as v from "valibot";
import { ROLLOUT_ITEM_STATUSES, ROLLOUT_STATUSES } from "../../db/schema/nocode";
import { identifierOf, orNull, resourceAnswer, single, timestamp, toManyAnswer } from "../request/answers";
import { isoTime } from "../respond";
import { AUTO_CONFIRM } from "./input";
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

/** B14: the schema of {@link rolloutResource} in answers. */
const rolloutAnswer = resourceAnswer(
  "upgrade-rollouts",
  {
    status: v.picklist(ROLLOUT_STATUSES),
    reason: orNull(v.string()),
    "batch-size": v.number(),
    "auto-confirm": v.picklist(AUTO_CONFIRM),
    "max-failures": v.number(),
    "target-version": v.string(),
    "current-batch": v.number(),
    "batch-count": v.number(),
    "created-at": timestamp,
    "updated-at": timestamp,
    items: v.array(
      v.strictObject({
        workspace: v.string(),
        run: orNull(v.string()),
        batch: v.number(),
        status: v.picklist(ROLLOUT_ITEM_STATUSES),
        reason: orNull(v.string()),
        "resource-additions": orNull(v.number()),
        "resource-changes": orNull(v.number()),
        "resource-destructions": orNull(v.number()),
      }),
    ),
  },
  {
    "no-code-module": v.strictObject({ data: identifierOf("no-code-modules") }),
    workspaces: toManyAnswer("workspaces"),
  },
);

/** A document holding one rollout. */
export const rolloutDocumentAnswer = single(rolloutAnswer);
