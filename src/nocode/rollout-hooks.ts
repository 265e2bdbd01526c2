/**
 * Where upgrades and no-code modules meet fleet upgrades (decision N15), kept out of the
 * rollouts folder so that rollouts (built on E5, E7 and no-code modules) can import
 * upgrade/ and no-code-modules/ while those still see rollouts: E5 asks whether a rollout
 * holds the workspace (→ 409); E7, the run steps and run actions tell the rollout holding a
 * run that the run moved; E2 and DELETE tell a module's active rollout that its module changed.
 */
import { and, eq, inArray } from "drizzle-orm";
import type { Db } from "../db/client";
import {
  type ROLLOUT_ITEM_STATUSES,
  type ROLLOUT_STATUSES,
  upgradeRolloutItems,
  upgradeRollouts,
} from "../db/schema/nocode";
import { type ProvisionMessage, rolloutStepMessage } from "./messages/provision";

/** N15: the statuses in which a rollout holds its module (a second one → 409). */
export const ACTIVE_ROLLOUT_STATUSES: readonly (typeof ROLLOUT_STATUSES)[number][] = [
  "pending",
  "running",
  "waiting-confirmation",
  "paused",
];

/** Item statuses that have not ended: the workspace belongs to the rollout (manual E5 → 409). */
export const OPEN_ITEM_STATUSES: readonly (typeof ROLLOUT_ITEM_STATUSES)[number][] = [
  "pending",
  "planning",
  "waiting-confirmation",
  "applying",
];

/** The item of a rollout that holds `workspaceId` and has not ended, if any (N15: manual E5 → 409). */
export function activeRolloutItemOf(
  db: Db,
  workspaceId: string,
): Promise<typeof upgradeRolloutItems.$inferSelect | undefined> {
  return db
    .select()
    .from(upgradeRolloutItems)
    .where(
      and(
        eq(upgradeRolloutItems.workspaceId, workspaceId),
        inArray(upgradeRolloutItems.status, [...OPEN_ITEM_STATUSES]),
      ),
    )
    .get();
}

/**
 * A run changed status outside a rollout step (E7 by hand, an apply finished or failed):
 * if a rollout item holds it and has not ended, queue a step of that rollout so it sees
 * the change. Best effort for the caller: the step re-reads everything.
 */
export async function notifyRolloutOfRun(
  db: Db,
  runId: string,
  send: (message: ProvisionMessage) => Promise<void>,
): Promise<void> {
  const item = await db
    .select({ rolloutId: upgradeRolloutItems.rolloutId })
    .from(upgradeRolloutItems)
    .where(and(eq(upgradeRolloutItems.runId, runId), inArray(upgradeRolloutItems.status, [...OPEN_ITEM_STATUSES])))
    .get();
  if (item) await send(rolloutStepMessage(item.rolloutId));
}

/**
 * The module's pin, `enabled` or existence changed (E2, DELETE): queue a step of its
 * active rollout, which ends it `failed` with the reason (N15).
 */
export async function notifyRolloutOfModule(
  db: Db,
  noCodeModuleId: string,
  send: (message: ProvisionMessage) => Promise<void>,
): Promise<void> {
  const rollout = await db
    .select({ id: upgradeRollouts.id })
    .from(upgradeRollouts)
    .where(
      and(
        eq(upgradeRollouts.noCodeModuleId, noCodeModuleId),
        inArray(upgradeRollouts.status, [...ACTIVE_ROLLOUT_STATUSES]),
      ),
    )
    .get();
  if (rollout) await send(rolloutStepMessage(rollout.id));
}
