/**
 * Cancel and force-cancel of a run (decision N19a), the service behind
 * `POST /runs/:id/actions/cancel|force-cancel` and any other caller that ends a run not yet
 * planned (E5's and rollouts' discard, the console's cancel button).
 *
 * - A run waiting without a running job (`pending`, `plan_queued`, `apply_queued`) becomes
 *   `canceled` at once; an agent run's queued job is canceled with it and leaves its pool's
 *   queue.
 * - A `remote` run (N7's built-in planner) becomes `canceled` at once in any cancelable
 *   status: the planner's own writes are conditional on `planning`/`applying`, so they lose.
 * - An agent run whose job runs (`planning`, `applying`) keeps its status; the time of the
 *   first cancel is recorded and the pool signals `cancel` in the answer to the agent's next
 *   ping. The agent interrupts its engine (SIGINT), uploads what it produced (an interrupted
 *   apply's state always) and finishes the job as `canceled`, which ends the run `canceled`.
 * - Force-cancel, once a cancel was asked at least KEYWAY_FORCE_CANCEL_AFTER_SECONDS (default
 *   60) before: the run and its job become `canceled` at once (the workspace's lock, which is
 *   the run's status, is released), the job's token serves only the state upload, and the
 *   pool signals `force-cancel` (the agent kills its engine with SIGKILL).
 *
 * A run's lock is its status (N20), so every `canceled` above releases it.
 */
import type { Db } from "../../db/client";
import { logError } from "../../lib/log";
import { type JobSignal, tellPoolJobCanceled } from "../agent-pools/job-queue";
import {
  CANCELABLE_RUN_STATUSES,
  cancelRunNowQuery,
  cancelRunStatements,
  findRun,
  forceCancelRunStatements,
  RUNNING_RUN_STATUSES,
  type RunStatus,
} from "./repo";

/** What a cancel or force-cancel came to. */
export type CancelOutcome =
  /** The run is `canceled` now. */
  | { kind: "canceled" }
  /** The run's job runs: its agent is told on its next ping and ends the run `canceled`. */
  | { kind: "signalled"; forceCancelAvailableAt: number }
  /** Not allowed now (409 for an API caller); `detail` says why. */
  | { kind: "refused"; detail: string };

/** The deployment var of N19a's wait before a force-cancel (seconds; default 60). */
const FORCE_CANCEL_AFTER_VAR = "KEYWAY_FORCE_CANCEL_AFTER_SECONDS";
const FORCE_CANCEL_AFTER_DEFAULT_SECONDS = 60;

/** Bindings and vars a cancel uses: the pools' Durable Objects and the force-cancel wait. */
export type CancelEnv = Pick<Env, "AGENT_POOLS"> & Partial<Record<typeof FORCE_CANCEL_AFTER_VAR, string>>;

/** N19a: how long after the first cancel a force-cancel is allowed (KEYWAY_FORCE_CANCEL_AFTER_SECONDS, default 60 s). */
export function forceCancelAfterMs(vars: Partial<Record<typeof FORCE_CANCEL_AFTER_VAR, string>>): number {
  const raw = vars[FORCE_CANCEL_AFTER_VAR]?.trim();
  if (raw === undefined || !/^[0-9]+(\.[0-9]+)?$/.test(raw)) return FORCE_CANCEL_AFTER_DEFAULT_SECONDS * 1000;
  return Math.round(Number(raw) * 1000);
}

const isCancelable = (status: string) => (CANCELABLE_RUN_STATUSES as readonly string[]).includes(status);

/**
 * Tell a pool of a cancel. D1 is already committed: a lost notice of a queued job is made good
 * by the pool's minute reconciliation; a lost signal by asking again (a repeated cancel signals
 * again) or, after the wait, by a force-cancel.
 */
async function tell(env: CancelEnv, job: { id: string; poolId: string }, signal: JobSignal): Promise<void> {
  try {
    await tellPoolJobCanceled(env, job.poolId, job.id, signal);
  } catch (err) {
    logError("", `could not tell the agent pool of a ${signal}`, err);
  }
}

/**
 * N19a cancel of run `runId` (see the module comment). Refused unless the run is `pending`,
 * `plan_queued`, `planning`, `apply_queued` or `applying`. A repeated cancel of a running
 * job is accepted again and changes nothing (force-cancel still counts from the first).
 */
export async function cancelRun(env: CancelEnv, db: Db, runId: string, now = Date.now()): Promise<CancelOutcome> {
  const run = await findRun(db, runId);
  if (!run) return { kind: "refused", detail: "The run does not exist" };
  if (!isCancelable(run.status)) return { kind: "refused", detail: `The run is ${run.status} and cannot be canceled` };

  if (run.executionMode !== "agent") {
    if ((await cancelRunNowQuery(db, runId, now)).length > 0) return { kind: "canceled" };
    return refusedAfterRace(db, runId);
  }

  const [queuedJobs, canceledRuns, signalledRuns, runningJobs] = await db.batch(cancelRunStatements(db, runId, now));
  for (const job of queuedJobs) await tell(env, job, "cancel");
  if (canceledRuns.length > 0) return { kind: "canceled" };
  const askedAt = signalledRuns[0]?.cancelRequestedAt;
  if (askedAt != null) {
    for (const job of runningJobs) await tell(env, job, "cancel");
    return { kind: "signalled", forceCancelAvailableAt: askedAt + forceCancelAfterMs(env) };
  }
  return refusedAfterRace(db, runId);
}

/**
 * N19a force-cancel of run `runId` (see the module comment): refused unless the run's job
 * still runs and a cancel was asked at least {@link forceCancelAfterMs} before `now`.
 */
export async function forceCancelRun(env: CancelEnv, db: Db, runId: string, now = Date.now()): Promise<CancelOutcome> {
  const run = await findRun(db, runId);
  if (!run) return { kind: "refused", detail: "The run does not exist" };
  if (!RUNNING_RUN_STATUSES.includes(run.status as RunStatus) || run.cancelRequestedAt === null)
    return { kind: "refused", detail: `The run is ${run.status}; force-cancel needs a cancel of a running run first` };
  const after = forceCancelAfterMs(env);
  if (now < run.cancelRequestedAt + after) {
    const wait = Math.ceil((run.cancelRequestedAt + after - now) / 1000);
    return {
      kind: "refused",
      detail: `Force-cancel is available ${after / 1000} s after the cancel was asked (in ${wait} s)`,
    };
  }
  const [jobs, moved] = await db.batch(forceCancelRunStatements(db, runId, now, now - after));
  for (const job of jobs) await tell(env, job, "force-cancel");
  if (moved.length > 0) return { kind: "canceled" };
  return refusedAfterRace(db, runId);
}

/** The refusal when the run moved on while this call ran (the agent finished, another cancel won). */
async function refusedAfterRace(db: Db, runId: string): Promise<CancelOutcome> {
  const now = await findRun(db, runId);
  return { kind: "refused", detail: `The run is ${now?.status ?? "gone"} and cannot be canceled` };
}
