/**
 * Jobs of agent runs (decisions N18, N19): the run transitions a job's start, finish or
 * loss makes (queueing is ../agent-pools/job-queue.ts). Every change is a
 * conditional UPDATE (as src/nocode/runs/repo.ts), so a retried call or a redelivered
 * message never moves a run twice, and an apply is never queued twice (one job per run and
 * phase, a unique index).
 */
import { and, eq, inArray, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { agentJobs, runs } from "../../db/schema/nocode";
import { logError } from "../../lib/log";
import {
  describeJob,
  type JobDescription,
  jobsWithNamesQuery,
  type QueueJobEnv,
  queueAgentJob,
  stampRunStatuses,
} from "../agent-pools/job-queue";
import type { Plan } from "../planner";
import { notifyRolloutOfRun } from "../rollout-hooks";
import { type RunStatus, transitionRunReturningQuery } from "../runs/repo";
import { type AgentJobRow, agentStatusQuery, type JobPhase, type JobStatus, moveJobQuery } from "./repo";

/** The job as the protocol shows it (docs/agent-protocol.md). */
export function jobDocument(job: JobDescription | (AgentJobRow & { workspaceName: string })) {
  return {
    id: job.id,
    "run-id": job.runId,
    phase: job.phase,
    "workspace-id": job.workspaceId,
    "workspace-name": job.workspaceName,
    organization: job.organization,
    destroy: "destroy" in job ? job.destroy : false,
    "engine-version-constraint": job.engineConstraint,
    "queued-at": new Date("queuedAt" in job ? job.queuedAt : job.createdAt).toISOString(),
  };
}

/** The statements that start a job for an agent (run `…_queued → planning|applying`). */
export function startJobStatements(
  db: Db,
  job: Pick<JobDescription, "id" | "runId" | "phase">,
  start: {
    agentId: string;
    tokenHash: string;
    registryTokenHash: string;
    expiresAt: number;
    executionDetails: Record<string, string>;
  },
  now: number,
) {
  const runMove =
    job.phase === "plan"
      ? transitionRunReturningQuery(db, job.runId, ["plan_queued"], ["planning"], now, {})
      : transitionRunReturningQuery(db, job.runId, ["apply_queued"], ["applying"], now, {});
  return [
    moveJobQuery(db, job.id, ["queued"], "running", now, {
      agentId: start.agentId,
      tokenHash: start.tokenHash,
      registryTokenHash: start.registryTokenHash,
      startedAt: now,
      expiresAt: start.expiresAt,
    }),
    runMove,
    db
      .update(runs)
      .set(
        job.phase === "plan"
          ? { statusReason: null, executionDetails: JSON.stringify(start.executionDetails) }
          : { statusReason: null },
      )
      .where(and(eq(runs.id, job.runId), inArray(runs.status, ["planning", "applying"]))),
    agentStatusQuery(db, start.agentId, "busy", now, now),
  ] as const;
}

/** The run statuses a job of each phase may still end. */
const RUN_STATUSES_OF_PHASE: Record<JobPhase, readonly RunStatus[]> = {
  plan: ["plan_queued", "planning"],
  apply: ["confirmed", "apply_queued", "applying"],
};

/**
 * End a job that its agent will not finish (lost, revoked, over its time limit): the job
 * becomes `status` and its run `errored` with `message` (or `canceled`). Returns whether
 * this call ended it.
 */
export async function endJobWithoutAgent(
  db: Db,
  job: Pick<AgentJobRow, "id" | "runId" | "phase">,
  status: Extract<JobStatus, "errored" | "canceled">,
  message: string,
  now = Date.now(),
): Promise<boolean> {
  const [moved] = await db.batch([
    moveJobQuery(db, job.id, ["queued", "running"], status, now, { finishedAt: now, message }),
    transitionRunReturningQuery(
      db,
      job.runId,
      RUN_STATUSES_OF_PHASE[job.phase],
      [status === "canceled" ? "canceled" : "errored"],
      now,
      { error: message },
    ),
  ]);
  return moved.length > 0;
}

/** The outcome of a `finish` call. */
export type FinishOutcome = { status: JobStatus } | { error: string };

/**
 * N18 `finish`: record the agent's verdict on its job and move the run on. Idempotent: a job
 * already ended answers its recorded status. A plan that finished moves the run to
 * `planned` (`planned_and_finished` without changes; on to `apply_queued` with auto-apply,
 * whose apply job is queued here); an apply that finished makes it `applied`.
 */
export async function finishJob(
  env: QueueJobEnv & Pick<Env, "PROVISION_QUEUE">,
  db: Db,
  job: AgentJobRow,
  verdict: { status: "finished" | "errored" | "canceled"; message: string | null },
  now = Date.now(),
): Promise<FinishOutcome> {
  if (job.status !== "running") return { status: job.status };
  const run = await db
    .select({ plan: runs.plan, autoApply: runs.autoApply, kind: runs.kind, cancelRequestedAt: runs.cancelRequestedAt })
    .from(runs)
    .where(eq(runs.id, job.runId))
    .get();
  if (!run) return { error: "the run no longer exists" };

  let status: JobStatus = verdict.status;
  let message = verdict.message;
  let runThrough: [RunStatus, ...RunStatus[]];
  let queueApply = false;
  if (verdict.status === "finished" && job.phase === "plan" && run.cancelRequestedAt !== null) {
    // N19a: the plan completed before the agent heard of the cancel; the run still ends canceled.
    status = "canceled";
    runThrough = ["canceled"];
  } else if (verdict.status === "finished" && job.phase === "plan") {
    if (!run.plan || !job.jsonPlanObjectId) {
      status = "errored";
      message = "the plan job finished without uploading a JSON plan";
      runThrough = ["errored"];
    } else {
      const plan = JSON.parse(run.plan) as Plan;
      if (!plan.hasChanges && run.kind !== "upgrade") runThrough = ["planned_and_finished"];
      else if (run.autoApply && run.kind === "plan-and-apply") {
        runThrough = ["planned", "confirmed", "apply_queued"];
        queueApply = true;
      } else runThrough = ["planned"];
    }
  } else if (verdict.status === "finished") runThrough = ["applied"];
  else if (verdict.status === "canceled") runThrough = ["canceled"];
  else {
    message = message ?? "the agent reported an error";
    runThrough = ["errored"];
  }

  const stateVersion =
    job.phase === "apply" && runThrough[0] === "applied"
      ? sql`(SELECT id FROM state_versions WHERE run_id = ${job.runId} ORDER BY serial DESC LIMIT 1)`
      : undefined;
  const [moved] = await db.batch([
    moveJobQuery(db, job.id, ["running"], status, now, { finishedAt: now, message }),
    db
      .update(runs)
      .set({
        status: runThrough[runThrough.length - 1]!,
        statusTimestamps: stampRunStatuses(runThrough, now),
        updatedAt: now,
        ...(runThrough[0] === "errored" || runThrough[0] === "canceled" ? { error: message } : {}),
        ...(stateVersion ? { stateVersionId: stateVersion } : {}),
      })
      .where(
        and(
          eq(runs.id, job.runId),
          inArray(runs.status, [job.phase === "plan" ? "planning" : "applying"]),
          sql`EXISTS (SELECT 1 FROM agent_jobs WHERE id = ${job.id} AND status = ${status} AND finished_at = ${now})`,
        ),
      ),
    // A running job always has its agent (set by `start`); the agent is idle again.
    agentStatusQuery(db, job.agentId ?? "", "idle", now, now),
  ]);
  if (moved.length === 0) {
    const again = await db.select({ status: agentJobs.status }).from(agentJobs).where(eq(agentJobs.id, job.id)).get();
    return { status: again?.status ?? status };
  }
  if (queueApply) await queueAgentJob(env, db, job.runId, "apply", now);
  await tellRolloutOfRun(env, db, job.runId);
  return { status };
}

/**
 * N15, N19: a rollout waits on the real plans and applies of its items' runs; tell the
 * rollout holding `runId` (if any) that the run moved. Best effort: the rollout's next
 * step re-reads every item, so a lost notice only delays it.
 */
export async function tellRolloutOfRun(env: Pick<Env, "PROVISION_QUEUE">, db: Db, runId: string): Promise<void> {
  try {
    await notifyRolloutOfRun(db, runId, async (message) => {
      await env.PROVISION_QUEUE.send(message, { contentType: "json" });
    });
  } catch (err) {
    logError("", "could not tell a rollout that its run moved", err);
  }
}

/** A pool's queued jobs as its Durable Object keeps them (reconciliation with D1, oldest first). */
export async function queuedJobsOfPool(db: Db, poolId: string): Promise<JobDescription[]> {
  const rows = await jobsWithNamesQuery(db, and(eq(agentJobs.poolId, poolId), eq(agentJobs.status, "queued")))
    .orderBy(agentJobs.createdAt)
    .limit(1000)
    .all();
  return rows.map((r) => describeJob(r.job, r.workspaceName, r.poolName));
}
