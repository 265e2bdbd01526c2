/** D1 access of the execution plane (decisions N17, N18): agent tokens, agents, jobs. */
import { and, desc, eq, gte, inArray, type SQL, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { type Page, type PageWindow, tablePage } from "../../db/page";
import { agentJobLogChunks, agentJobs, agentPools, agents, nocodeTokens, runDataObjects } from "../../db/schema/nocode";
import type { TokenRow } from "../tokens/api-tokens";

export type AgentRow = typeof agents.$inferSelect;
export type AgentJobRow = typeof agentJobs.$inferSelect;
export type AgentStatus = "idle" | "busy" | "unknown" | "errored" | "exited";
export type JobStatus = AgentJobRow["status"];
export type JobPhase = AgentJobRow["phase"];

/** An agent token by its stored hash, with its pool (none: not an agent token, or its pool is gone). */
export async function findAgentToken(
  db: Db,
  hash: string,
): Promise<{ tokenId: string; poolId: string; poolName: string; organization: string } | undefined> {
  return db
    .select({
      tokenId: nocodeTokens.id,
      poolId: agentPools.id,
      poolName: agentPools.name,
      organization: agentPools.organization,
    })
    .from(nocodeTokens)
    .innerJoin(agentPools, eq(agentPools.id, nocodeTokens.subjectId))
    .where(and(eq(nocodeTokens.hash, hash), eq(nocodeTokens.kind, "agent")))
    .get();
}

/** The hashes and ids of a pool's agent tokens (the pool's Durable Object caches them). */
export function poolTokens(db: Db, poolId: string): Promise<{ hash: string; id: string }[]> {
  return db
    .select({ hash: nocodeTokens.hash, id: nocodeTokens.id })
    .from(nocodeTokens)
    .where(and(eq(nocodeTokens.kind, "agent"), eq(nocodeTokens.subjectId, poolId)))
    .all();
}

/** A pool's agent tokens, newest first, and their total. */
export async function listPoolTokens(db: Db, poolId: string, page: PageWindow): Promise<Page<TokenRow>> {
  const where = and(eq(nocodeTokens.kind, "agent"), eq(nocodeTokens.subjectId, poolId));
  return tablePage(db, nocodeTokens, where, [desc(nocodeTokens.createdAt)], page);
}

/** An agent by id. */
export function findAgent(db: Db, id: string): Promise<AgentRow | undefined> {
  return db.select().from(agents).where(eq(agents.id, id)).get();
}

/** A pool's agents (optionally only those whose last ping is at or after `since`), newest first. */
export async function listPoolAgents(
  db: Db,
  poolId: string,
  page: PageWindow,
  since?: number,
): Promise<Page<AgentRow>> {
  const where: SQL | undefined =
    since === undefined ? eq(agents.poolId, poolId) : and(eq(agents.poolId, poolId), gte(agents.lastPingAt, since));
  return tablePage(db, agents, where, [desc(agents.createdAt), desc(agents.id)], page);
}

/** Deletes an agent's row (its pool's Durable Object has ended its session first). */
export async function deleteAgent(db: Db, id: string): Promise<void> {
  await db.delete(agents).where(eq(agents.id, id)).run();
}

/** Set the status (and optionally the last ping) of agents. */
export function agentStatusQuery(db: Db, agentId: string, status: AgentStatus, at: number, lastPingAt?: number) {
  return db
    .update(agents)
    .set({ status, updatedAt: at, ...(lastPingAt === undefined ? {} : { lastPingAt }) })
    .where(eq(agents.id, agentId));
}

/** A job by the stored hash of its job token. */
export function findJobByTokenHash(db: Db, hash: string): Promise<AgentJobRow | undefined> {
  return db.select().from(agentJobs).where(eq(agentJobs.tokenHash, hash)).get();
}

/** The job of a run that is queued or running, if any (a run has at most one at a time). */
export function findLiveJobOfRun(db: Db, runId: string): Promise<AgentJobRow | undefined> {
  return db
    .select()
    .from(agentJobs)
    .where(and(eq(agentJobs.runId, runId), inArray(agentJobs.status, ["queued", "running"])))
    .get();
}

/** The plan job of a run (an apply job reads what its plan uploaded). */
export function findPlanJobOfRun(db: Db, runId: string): Promise<AgentJobRow | undefined> {
  return db
    .select()
    .from(agentJobs)
    .where(and(eq(agentJobs.runId, runId), eq(agentJobs.phase, "plan")))
    .get();
}

/** Set `set` on a job while it is `running` (an upload of the agent that runs it). */
export function updateRunningJobQuery(db: Db, jobId: string, set: Partial<AgentJobRow>, at: number) {
  return db
    .update(agentJobs)
    .set({ ...set, updatedAt: at })
    .where(and(eq(agentJobs.id, jobId), eq(agentJobs.status, "running")));
}

/**
 * Record a log chunk of `length` bytes stored as `objectId` at byte `offset` of a job's log,
 * only while the job's stored log length is still `offset` (batch it before
 * advanceJobLogQuery: a concurrent append that moved the length first wins).
 */
export function insertLogChunkQuery(db: Db, jobId: string, offset: number, length: number, objectId: string) {
  return db
    .insert(agentJobLogChunks)
    .select(
      sql`SELECT ${jobId}, ${offset}, ${length}, ${objectId}
        WHERE EXISTS (SELECT 1 FROM agent_jobs WHERE id = ${jobId} AND log_length = ${offset})`,
    )
    .onConflictDoNothing();
}

/** Move a job's stored log length from `from` to `to` (conditional); returns the new length when it moved. */
export function advanceJobLogQuery(db: Db, jobId: string, from: number, to: number, at: number) {
  return db
    .update(agentJobs)
    .set({ logLength: to, updatedAt: at })
    .where(and(eq(agentJobs.id, jobId), eq(agentJobs.logLength, from)))
    .returning({ length: agentJobs.logLength });
}

/** A job's stored log length (undefined when the job is gone). */
export function findJobLogLength(db: Db, jobId: string): Promise<{ length: number } | undefined> {
  return db.select({ length: agentJobs.logLength }).from(agentJobs).where(eq(agentJobs.id, jobId)).get();
}

/**
 * Cancel a job from `from` if its run is `canceled` (batch it after the run's move: the job
 * ends only with the run that this batch ended).
 */
export function cancelJobOfCanceledRunQuery(
  db: Db,
  job: Pick<AgentJobRow, "id" | "runId">,
  from: readonly JobStatus[],
  at: number,
  message: string,
) {
  return db
    .update(agentJobs)
    .set({ status: "canceled", finishedAt: at, message, updatedAt: at })
    .where(
      and(
        eq(agentJobs.id, job.id),
        inArray(agentJobs.status, [...from]),
        sql`EXISTS (SELECT 1 FROM runs WHERE runs.id = ${job.runId} AND runs.status = 'canceled')`,
      ),
    )
    .returning({ id: agentJobs.id });
}

/** Move a job from one of `from` to `to` (conditional), setting `set`; returns the statement. */
export function moveJobQuery(
  db: Db,
  jobId: string,
  from: readonly JobStatus[],
  to: JobStatus,
  at: number,
  set: Partial<AgentJobRow> = {},
) {
  return db
    .update(agentJobs)
    .set({ ...set, status: to, updatedAt: at })
    .where(and(eq(agentJobs.id, jobId), inArray(agentJobs.status, [...from])))
    .returning({ id: agentJobs.id });
}

/** A stored run-data object by id. */
export function findRunData(db: Db, id: string) {
  return db.select().from(runDataObjects).where(eq(runDataObjects.id, id)).get();
}
