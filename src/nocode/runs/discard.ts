/**
 * Discard a run, or cancel it when it has not been planned yet (decisions N7, N8, N15,
 * N19a): `actions/discard`, E5 (a stale upgrade run) and a rollout's cancel discard a
 * `planned` run; N19a makes their "discard" of a run that has not reached `planned` a
 * cancel. A run still waiting in `pending` or `plan_queued` is canceled in place here, its
 * queued plan job with it, in one D1 batch (a transaction): either this batch or the
 * agent's `start` (which moves the job `queued → running` and the run `plan_queued →
 * planning` together) wins, never both, so a job canceled here is never started, and a
 * run an agent already took is left to it. The pool is then told to drop the canceled job
 * (best effort: its minute reconciliation with D1 drops it too, and an agent that polled it
 * meanwhile is refused at `start`). Given the pool binding, a run an agent is `planning` is
 * canceled through N19a's {@link cancelRun}: its agent is signalled on its next ping.
 */
import { and, eq, inArray, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { agentJobs, runs } from "../../db/schema/nocode";
import { logError } from "../../lib/log";
import { type QueueJobEnv, tellPoolJobCanceled } from "../agent-pools/job-queue";
import { cancelRun } from "./cancel";
import { discardPlannedRunStatements, dropVarChangesQuery, findRun, type RunStatus, transitionRunQuery } from "./repo";

/** The statuses of a run that a discard cancels in place (N19a: queued, not yet taken by an agent or the planner). */
export const CANCELABLE_IN_PLACE: readonly RunStatus[] = ["pending", "plan_queued"];

/**
 * What a discard did: the run was discarded (`planned`), canceled (queued), its planning
 * agent signalled to cancel (`signalled`, the run ends `canceled` when the agent finishes),
 * or none of these (null).
 */
export type DiscardOutcome = "discarded" | "canceled" | "signalled" | null;

/** The statements that cancel a queued run and its queued plan job (see the file comment). */
function cancelQueuedRunStatements(db: Db, runId: string, at: number) {
  const canceled = and(eq(runs.id, runId), eq(runs.status, "canceled"));
  return [
    transitionRunQuery(db, runId, CANCELABLE_IN_PLACE, ["canceled"], at, {}).returning({ id: runs.id }),
    dropVarChangesQuery(db, runId, eq(runs.status, "canceled")),
    db
      .update(agentJobs)
      .set({
        status: "canceled",
        finishedAt: at,
        message: "the run was canceled before an agent started it",
        updatedAt: at,
      })
      .where(
        and(
          eq(agentJobs.runId, runId),
          inArray(agentJobs.status, ["queued"]),
          sql`EXISTS (SELECT 1 FROM ${runs} WHERE ${canceled})`,
        ),
      )
      .returning({ id: agentJobs.id, poolId: agentJobs.poolId }),
  ] as const;
}

/**
 * Discard `runId` if it is `planned`, or cancel it if it is still queued (see the file
 * comment). Returns what happened; null when the run was in neither state (the caller's 409).
 * With `pools`, the pool of a canceled job is told to drop it.
 *
 * @example
 * if (!(await discardOrCancelRun(db, run.id, Date.now(), c.env))) throw conflict(`The run is ${run.status}`);
 */
export async function discardOrCancelRun(
  db: Db,
  runId: string,
  now = Date.now(),
  pools?: QueueJobEnv,
): Promise<DiscardOutcome> {
  const [discarded] = await db.batch(discardPlannedRunStatements(db, runId, now));
  if (discarded.length > 0) return "discarded";
  const [canceled, , jobs] = await db.batch(cancelQueuedRunStatements(db, runId, now));
  if (canceled.length === 0) {
    // Never an apply: only a run still `planning` is "not yet planned" (N19a).
    if (!pools || (await findRun(db, runId))?.status !== "planning") return null;
    const outcome = await cancelRun(pools, db, runId, now);
    return outcome.kind === "refused" ? null : outcome.kind;
  }
  for (const job of pools ? jobs : []) {
    try {
      await tellPoolJobCanceled(pools!, job.poolId, job.id);
    } catch (err) {
      logError("", "could not tell the agent pool of a canceled job", err);
    }
  }
  return "canceled";
}
