/**
 * Where runs, tokens and the registry meet the execution plane (decisions N17, N18, N19),
 * kept out of the agents folder so that agents/ (built on runs/) can import runs/ while
 * runs/, users/ and registry/ still reach the pools: a run's plan or apply is queued as a
 * job for its workspace's pool (one job per run and phase, a unique index, so a retried
 * call or a redelivered message never queues twice); a revoked agent token ends its
 * sessions; a running job's registry token reads its organization's modules.
 *
 * The pool's Durable Object is reached through the few methods these callers need
 * ({@link PoolNotices}), typed here so that this file does not import agents/.
 */
import { and, eq, inArray, type SQL, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { agentJobs, agentPools, runs, workspaces } from "../../db/schema/nocode";
import { keyedHash } from "../../lib/crypto/hmac";
import { logError } from "../../lib/log";
import type { NocodeCaller } from "../access/auth";
import { newId } from "../ids";

/** A job of an agent run as its pool keeps it and hands it to an agent. */
export interface JobDescription {
  id: string;
  runId: string;
  phase: "plan" | "apply";
  workspaceId: string;
  workspaceName: string;
  organization: string;
  poolId: string;
  poolName: string;
  /** The workspace's `engine-version`: an exact version or a constraint. */
  engineConstraint: string;
  destroy: boolean;
  queuedAt: number;
}

/** What callers outside agents/ ask of a pool's Durable Object (agents/pool-object.ts implements it). */
interface PoolNotices {
  enqueue(job: JobDescription): Promise<unknown>;
  tokenRevoked(tokenId: string): Promise<unknown>;
  workspaceLock(workspaceId: string, locked: boolean): Promise<unknown>;
  jobCanceled(jobId: string, signal?: JobSignal): Promise<unknown>;
}

/** N19a: what a pool tells the agent running a job in its next ping answer. */
export type JobSignal = "cancel" | "force-cancel";

/** The pool's Durable Object, seen through {@link PoolNotices}. */
function poolNotices(env: Pick<Env, "AGENT_POOLS">, poolId: string): PoolNotices {
  // The binding's class is AgentPool (agents/pool-object.ts), whose RPC methods include these.
  return env.AGENT_POOLS.get(env.AGENT_POOLS.idFromName(poolId)) as unknown as PoolNotices;
}

/** Bindings that queueing needs. */
export type QueueJobEnv = Pick<Env, "AGENT_POOLS">;

/** The run status a queued job of each phase waits in. */
const QUEUED_STATUS = { plan: "plan_queued", apply: "apply_queued" } as const;

/** A row of agent_jobs as its pool keeps it. */
export function describeJob(
  job: typeof agentJobs.$inferSelect,
  workspaceName: string,
  poolName: string,
): JobDescription {
  return {
    id: job.id,
    runId: job.runId,
    phase: job.phase,
    workspaceId: job.workspaceId,
    workspaceName,
    organization: job.organization,
    poolId: job.poolId,
    poolName,
    engineConstraint: job.engineConstraint,
    destroy: false,
    queuedAt: job.createdAt,
  };
}

/**
 * The jobs matching `where` with the names a {@link JobDescription} carries. workspaces.name
 * and agent_pools.name are both "name": inside a D1 batch rows come back as objects keyed by
 * column name, so the second would overwrite the first and shift every later value.
 * Distinct aliases keep both.
 */
export function jobsWithNamesQuery(db: Db, where: SQL | undefined) {
  return db
    .select({
      job: agentJobs,
      workspaceName: sql<string>`${workspaces.name}`.as("workspace_name"),
      poolName: sql<string>`${agentPools.name}`.as("pool_name"),
    })
    .from(agentJobs)
    .innerJoin(workspaces, eq(workspaces.id, agentJobs.workspaceId))
    .innerJoin(agentPools, eq(agentPools.id, agentJobs.poolId))
    .where(where);
}

/** SQL that stamps `<status>-at` in a run's `status_timestamps` (HCP's names, as runs/repo.ts). */
export function stampRunStatuses(statuses: readonly string[], at: number) {
  let expr = sql`${runs.statusTimestamps}`;
  const iso = new Date(at).toISOString();
  for (const status of statuses) {
    const key = status === "pending" ? "plan-queueable-at" : `${status.replaceAll("_", "-")}-at`;
    expr = sql`json_set(${expr}, ${`$."${key}"`}, ${iso})`;
  }
  return expr;
}

/**
 * Queue the job of `phase` for an agent run and tell its pool. A plan moves the run
 * `pending → plan_queued`; an apply needs the run in `apply_queued` already (E7,
 * `actions/apply` or auto-apply put it there). Idempotent by run and phase. Returns false
 * when the run could not be queued (not in the status the phase needs; or the workspace
 * has no pool, which errors the run).
 */
export async function queueAgentJob(
  env: QueueJobEnv,
  db: Db,
  runId: string,
  phase: "plan" | "apply",
  now = Date.now(),
  requestId = "",
): Promise<boolean> {
  const status = QUEUED_STATUS[phase];
  const jobId = newId("job");
  const [, , rows] = await db.batch([
    phase === "plan"
      ? db
          .update(runs)
          .set({ status: "plan_queued", statusTimestamps: stampRunStatuses(["plan_queued"], now), updatedAt: now })
          .where(and(eq(runs.id, runId), eq(runs.status, "pending")))
      : db.select({ id: runs.id }).from(runs).where(eq(runs.id, runId)),
    // Columns in the table's declared order (src/db/schema/nocode.ts agentJobs).
    db
      .insert(agentJobs)
      .select(
        sql`SELECT ${jobId}, r.id, ${phase}, w.agent_pool_id, w.id, w.organization, w.engine_version, 'queued',
          NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL, NULL, ${now}, ${now}, NULL
        FROM runs r JOIN workspaces w ON w.id = r.workspace_id
        WHERE r.id = ${runId} AND r.status = ${status} AND w.agent_pool_id IS NOT NULL`,
      )
      .onConflictDoNothing(),
    jobsWithNamesQuery(db, and(eq(agentJobs.runId, runId), eq(agentJobs.phase, phase))),
  ]);
  const found = rows[0];
  if (!found) {
    const error = "the workspace has no agent pool to run it";
    await db
      .update(runs)
      .set({ status: "errored", error, statusTimestamps: stampRunStatuses(["errored"], now), updatedAt: now })
      .where(and(eq(runs.id, runId), inArray(runs.status, [status])))
      .run();
    return false;
  }
  if (found.job.status !== "queued") return true;
  // Committed in D1: a lost notice is picked up by the pool's minute reconciliation.
  try {
    await poolNotices(env, found.job.poolId).enqueue(describeJob(found.job, found.workspaceName, found.poolName));
  } catch (err) {
    logError(requestId, "could not tell the agent pool of a queued job", err);
  }
  return true;
}

/** N17: an agent token was deleted; the pool ends the sessions opened with it at once. */
export async function tellPoolTokenRevoked(env: QueueJobEnv, poolId: string, tokenId: string): Promise<void> {
  await poolNotices(env, poolId).tokenRevoked(tokenId);
}

/**
 * N20: tell the pool that a user locked (or unlocked) one of its workspaces: while locked,
 * the workspace's queued plan jobs are not handed out, so its runs stay `plan_queued`.
 */
export async function tellPoolWorkspaceLock(
  env: QueueJobEnv,
  poolId: string,
  workspaceId: string,
  locked: boolean,
): Promise<void> {
  await poolNotices(env, poolId).workspaceLock(workspaceId, locked);
}

/**
 * N19a: tell the pool that a job of its was canceled (a queued job leaves its queue) or that
 * the agent running it must interrupt its engine (`cancel`: SIGINT; `force-cancel`: SIGKILL),
 * said in the answer to the agent's next ping.
 */
export async function tellPoolJobCanceled(
  env: QueueJobEnv,
  poolId: string,
  jobId: string,
  signal: JobSignal = "cancel",
): Promise<void> {
  await poolNotices(env, poolId).jobCanceled(jobId, signal);
}

/** Purpose of the keyed hash of a job's registry token (B2). */
export const REGISTRY_TOKEN_PURPOSE = "agent-registry-token";

/**
 * The caller of an agent job's registry token (N18): the job's organization, read-only,
 * while the job runs; null for any other token. The registry protocol has only GETs.
 */
export async function registryTokenCaller(
  env: Pick<Env, "KEYWAY_HASH_KEY">,
  db: Db,
  token: string,
): Promise<NocodeCaller | null> {
  if (!token.includes(".atlasv1.") || token.length > 200) return null;
  const hash = await keyedHash(env.KEYWAY_HASH_KEY, REGISTRY_TOKEN_PURPOSE, token);
  const job = await db.select().from(agentJobs).where(eq(agentJobs.registryTokenHash, hash)).get();
  if (job?.status !== "running" || (job.expiresAt !== null && job.expiresAt <= Date.now())) return null;
  return { kind: "organization", organization: job.organization };
}
