/**
 * D1 access for upgrade rollouts (decision N15). Every status change is a conditional
 * UPDATE (`… WHERE status IN (…)`) whose caller checks whether it changed a row: that is
 * what keeps a redelivered or duplicated queue message from doing anything twice.
 */
import { and, asc, count, desc, eq, inArray, ne, or } from "drizzle-orm";
import type { Db } from "../../db/client";
import {
  type ROLLOUT_ITEM_STATUSES,
  type ROLLOUT_STATUSES,
  runs,
  upgradeRolloutItems,
  upgradeRollouts,
} from "../../db/schema/nocode";
import { type RunRow, TERMINAL_RUN_STATUSES } from "../runs/repo";

/** A rollout row. */
export type RolloutRow = typeof upgradeRollouts.$inferSelect;
/** A rollout item row. */
export type RolloutItemRow = typeof upgradeRolloutItems.$inferSelect;
/** A rollout status. */
export type RolloutStatus = (typeof ROLLOUT_STATUSES)[number];
/** A rollout item status. */
export type RolloutItemStatus = (typeof ROLLOUT_ITEM_STATUSES)[number];

/** A rollout by id. */
export function findRollout(db: Db, id: string): Promise<RolloutRow | undefined> {
  return db.select().from(upgradeRollouts).where(eq(upgradeRollouts.id, id)).get();
}

/** A rollout's items in order. */
export function listRolloutItems(db: Db, rolloutId: string): Promise<RolloutItemRow[]> {
  return db
    .select()
    .from(upgradeRolloutItems)
    .where(eq(upgradeRolloutItems.rolloutId, rolloutId))
    .orderBy(asc(upgradeRolloutItems.position))
    .all();
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
export function listItemsBehindTheirRuns(
  db: Db,
  rolloutId: string,
): Promise<{ item: RolloutItemRow; run: Pick<RunRow, "id" | "status" | "error"> }[]> {
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
      and(
        eq(upgradeRolloutItems.rolloutId, rolloutId),
        eq(upgradeRolloutItems.workspaceId, workspaceId),
        inArray(upgradeRolloutItems.status, [...from]),
      ),
    )
    .returning({ id: upgradeRolloutItems.workspaceId })
    .get();
  return row !== undefined;
}

/** Items per INSERT: 13 columns each, D1 allows 100 bound parameters per statement. */
const ITEMS_PER_INSERT = 7;

/** Statements that store a new rollout and its items (items chunked under D1's bound-parameter limit). */
export function insertRolloutStatements(db: Db, rollout: RolloutRow, items: readonly RolloutItemRow[]) {
  const inserts = [];
  for (let i = 0; i < items.length; i += ITEMS_PER_INSERT)
    inserts.push(db.insert(upgradeRolloutItems).values(items.slice(i, i + ITEMS_PER_INSERT)));
  return [db.insert(upgradeRollouts).values(rollout), ...inserts] as const;
}

/** Statements that delete a rollout and its items. */
export function deleteRolloutStatements(db: Db, rolloutId: string) {
  return [
    db.delete(upgradeRolloutItems).where(eq(upgradeRolloutItems.rolloutId, rolloutId)),
    db.delete(upgradeRollouts).where(eq(upgradeRollouts.id, rolloutId)),
  ] as const;
}

/**
 * Take over an item left `planning` by a step that stopped: a conditional UPDATE on the
 * time stamp that step left, so of two deliveries at once only one takes it. Whether
 * this call did.
 */
export async function takeOverPlanningItem(
  db: Db,
  rolloutId: string,
  workspaceId: string,
  leftAt: number,
  at: number,
): Promise<boolean> {
  const claimed = await db
    .update(upgradeRolloutItems)
    .set({ updatedAt: at })
    .where(
      and(
        eq(upgradeRolloutItems.rolloutId, rolloutId),
        eq(upgradeRolloutItems.workspaceId, workspaceId),
        eq(upgradeRolloutItems.status, "planning"),
        eq(upgradeRolloutItems.updatedAt, leftAt),
      ),
    )
    .returning({ id: upgradeRolloutItems.workspaceId })
    .get();
  return claimed !== undefined;
}

/** Move a running rollout from batch `from` to `to`, conditional on both (a duplicated step moves it once). Whether this call did. */
export async function moveToBatch(db: Db, rolloutId: string, from: number, to: number, at: number): Promise<boolean> {
  const moved = await db
    .update(upgradeRollouts)
    .set({ currentBatch: to, updatedAt: at })
    .where(
      and(
        eq(upgradeRollouts.id, rolloutId),
        eq(upgradeRollouts.currentBatch, from),
        eq(upgradeRollouts.status, "running"),
      ),
    )
    .returning({ id: upgradeRollouts.id })
    .get();
  return moved !== undefined;
}
