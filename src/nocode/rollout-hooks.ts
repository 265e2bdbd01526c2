/**
 * Where upgrades meet fleet upgrades (decision N15), kept out of both features' folders so
 * that rollouts (built on E5 and E7) can import upgrade/ while E5 and E7 still see
 * rollouts: E5 asks whether a rollout holds the workspace (→ 409), and E7, the run steps
 * and run actions tell the rollout holding a run that the run moved.
 */
import { and, eq, inArray } from "drizzle-orm";
import type { Db } from "../db/client";
import { type ROLLOUT_ITEM_STATUSES, upgradeRolloutItems } from "../db/schema";
import { type ProvisionMessage, rolloutStepMessage } from "./queue/messages";

/** Item statuses that have not ended: the workspace belongs to the rollout (manual E5 → 409). */
export const OPEN_ITEM_STATUSES: readonly (typeof ROLLOUT_ITEM_STATUSES)[number][] = ["pending", "planning", "waiting-confirmation", "applying"];

/** The item of a rollout that holds `workspaceId` and has not ended, if any (N15: manual E5 → 409). */
export function activeRolloutItemOf(db: Db, workspaceId: string): Promise<typeof upgradeRolloutItems.$inferSelect | undefined> {
  return db
    .select()
    .from(upgradeRolloutItems)
    .where(and(eq(upgradeRolloutItems.workspaceId, workspaceId), inArray(upgradeRolloutItems.status, [...OPEN_ITEM_STATUSES])))
    .get();
}

/**
 * A run changed status outside a rollout step (E7 by hand, an apply finished or failed):
 * if a rollout item holds it and has not ended, queue a step of that rollout so it sees
 * the change. Best effort for the caller: the step re-reads everything.
 */
export async function notifyRolloutOfRun(db: Db, runId: string, send: (message: ProvisionMessage) => Promise<void>): Promise<void> {
  const item = await db
    .select({ rolloutId: upgradeRolloutItems.rolloutId })
    .from(upgradeRolloutItems)
    .where(and(eq(upgradeRolloutItems.runId, runId), inArray(upgradeRolloutItems.status, [...OPEN_ITEM_STATUSES])))
    .get();
  if (item) await send(rolloutStepMessage(item.rolloutId));
}
