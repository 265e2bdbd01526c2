/**
 * D1 access for upgrade rollouts (decision N15). Every status change is a conditional
 * UPDATE (`… WHERE status IN (…)`) whose caller checks whether it changed a row: that is
 * what keeps a redelivered or duplicated queue message from doing anything twice.
 */
import { and, asc, count, desc, eq, inArray, ne, or } from "drizzle-orm";
import type { Db } from "../../db/client";
import { type ROLLOUT_ITEM_STATUSES, type ROLLOUT_STATUSES, runs, upgradeRolloutItems, upgradeRollouts } from "../../db/schema";
import { type ProvisionMessage, rolloutStepMessage } from "../queue/messages";
import { type RunRow, TERMINAL_RUN_STATUSES } from "../runs/repo";

/** A rollout row. */
export type RolloutRow = typeof upgradeRollouts.$inferSelect;
/** A rollout item row. */
export type RolloutItemRow = typeof upgradeRolloutItems.$inferSelect;
/** A rollout status. */
export type RolloutStatus = (typeof ROLLOUT_STATUSES)[number];
/** A rollout item status. */
export type RolloutItemStatus = (typeof ROLLOUT_ITEM_STATUSES)[number];

/** N15: the statuses in which a rollout holds its module (a second one → 409). */
export const ACTIVE_ROLLOUT_STATUSES: readonly RolloutStatus[] = ["pending", "running", "waiting-confirmation", "paused"];
/** Item statuses that have not ended: the workspace belongs to the rollout (manual E5 → 409). */
export const OPEN_ITEM_STATUSES: readonly RolloutItemStatus[] = ["pending", "planning", "waiting-confirmation", "applying"];

/** A rollout by id. */
export function findRollout(db: Db, id: string): Promise<RolloutRow | undefined> {
  return db.select().from(upgradeRollouts).where(eq(upgradeRollouts.id, id)).get();
}

/** A rollout's items in order. */
export function listRolloutItems(db: Db, rolloutId: string): Promise<RolloutItemRow[]> {
  return db.select().from(upgradeRolloutItems).where(eq(upgradeRolloutItems.rolloutId, rolloutId)).orderBy(asc(upgradeRolloutItems.position)).all();
}

/** The items of one batch of a rollout, in order. */
export function listBatchItems(db: Db, rolloutId: string, batch: number): Promise<RolloutItemRow[]> {
  return db
    .select()
    .from(upgradeRolloutItems)
    .where(and(eq(upgradeRolloutItems.rolloutId, rolloutId), eq(upgradeRolloutItems.batch, batch)))
    .orderBy(asc(upgradeRolloutItems.position))
    .all();
}

/** Whether the rollout has a batch with this number. */
export async function hasBatch(db: Db, rolloutId: string, batch: number): Promise<boolean> {
  const row = await db
    .select({ position: upgradeRolloutItems.position })
    .from(upgradeRolloutItems)
    .where(and(eq(upgradeRolloutItems.rolloutId, rolloutId), eq(upgradeRolloutItems.batch, batch)))
    .limit(1)
    .get();
  return row !== undefined;
}

/**
 * A rollout's items whose run moved on since the item last followed it (an item waiting
 * for confirmation whose run is no longer `planned`; an applying item whose run ended),
 * with the run's status and error, in order. One query, however many items are applying.
 */
export function listItemsBehindTheirRuns(db: Db, rolloutId: string): Promise<{ item: RolloutItemRow; run: Pick<RunRow, "id" | "status" | "error"> }[]> {
  return db
    .select({ item: upgradeRolloutItems, run: { id: runs.id, status: runs.status, error: runs.error } })
    .from(upgradeRolloutItems)
    .innerJoin(runs, eq(runs.id, upgradeRolloutItems.runId))
    .where(
      and(
        eq(upgradeRolloutItems.rolloutId, rolloutId),
        or(
          and(eq(upgradeRolloutItems.status, "waiting-confirmation"), ne(runs.status, "planned")),
          and(eq(upgradeRolloutItems.status, "applying"), inArray(runs.status, [...TERMINAL_RUN_STATUSES])),
        ),
      ),
    )
    .orderBy(asc(upgradeRolloutItems.position))
    .all();
}

/** How many of a rollout's items errored (N15: only they count toward `max-failures`). */
export async function countErroredItems(db: Db, rolloutId: string): Promise<number> {
  const row = await db
    .select({ n: count() })
    .from(upgradeRolloutItems)
    .where(and(eq(upgradeRolloutItems.rolloutId, rolloutId), eq(upgradeRolloutItems.status, "errored")))
    .get();
  return row?.n ?? 0;
}

/** The rollouts of a no-code module, newest first (the console lists them). */
export function listModuleRollouts(db: Db, noCodeModuleId: string, limit = 20): Promise<RolloutRow[]> {
  return db
    .select()
    .from(upgradeRollouts)
    .where(eq(upgradeRollouts.noCodeModuleId, noCodeModuleId))
    .orderBy(desc(upgradeRollouts.createdAt), desc(upgradeRollouts.id))
    .limit(limit)
    .all();
}

/** The item of a rollout that holds `workspaceId` and has not ended, if any (N15: manual E5 → 409). */
export function activeRolloutItemOf(db: Db, workspaceId: string): Promise<RolloutItemRow | undefined> {
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

/**
 * Move a rollout from one of `from` to `to`; returns whether this call made the change.
 */
export async function transitionRollout(
  db: Db,
  id: string,
  from: readonly RolloutStatus[],
  to: RolloutStatus,
  at: number,
  set: Partial<Pick<RolloutRow, "reason" | "currentBatch">> = {},
): Promise<boolean> {
  const row = await db
    .update(upgradeRollouts)
    .set({ ...set, status: to, updatedAt: at })
    .where(and(eq(upgradeRollouts.id, id), inArray(upgradeRollouts.status, [...from])))
    .returning({ id: upgradeRollouts.id })
    .get();
  return row !== undefined;
}

/** Move an item from one of `from` to `to` (with `set`); returns whether this call made the change. */
export async function transitionItem(
  db: Db,
  rolloutId: string,
  workspaceId: string,
  from: readonly RolloutItemStatus[],
  to: RolloutItemStatus,
  at: number,
  set: Partial<Pick<RolloutItemRow, "runId" | "reason" | "additions" | "changes" | "destructions">> = {},
): Promise<boolean> {
  const row = await db
    .update(upgradeRolloutItems)
    .set({ ...set, status: to, updatedAt: at })
    .where(
      and(eq(upgradeRolloutItems.rolloutId, rolloutId), eq(upgradeRolloutItems.workspaceId, workspaceId), inArray(upgradeRolloutItems.status, [...from])),
    )
    .returning({ id: upgradeRolloutItems.workspaceId })
    .get();
  return row !== undefined;
}

/**
 * The module's pin, `enabled` or existence changed (E2, DELETE): queue a step of its
 * active rollout, which ends it `failed` with the reason (N15).
 */
export async function notifyRolloutOfModule(db: Db, noCodeModuleId: string, send: (message: ProvisionMessage) => Promise<void>): Promise<void> {
  const rollout = await db
    .select({ id: upgradeRollouts.id })
    .from(upgradeRollouts)
    .where(and(eq(upgradeRollouts.noCodeModuleId, noCodeModuleId), inArray(upgradeRollouts.status, [...ACTIVE_ROLLOUT_STATUSES])))
    .get();
  if (rollout) await send(rolloutStepMessage(rollout.id));
}
