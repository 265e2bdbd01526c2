/** D1 reads of run data (decision N20): a run's agent jobs and their log chunks. */
import { and, asc, eq, lt, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { agentJobLogChunks, agentJobs } from "../../db/schema/nocode";
import type { AgentJobRow } from "../agents/repo";

/** A run's agent job of `phase`, if an agent executes it. */
export function findJobOfRun(db: Db, runId: string, phase: "plan" | "apply"): Promise<AgentJobRow | undefined> {
  return db
    .select()
    .from(agentJobs)
    .where(and(eq(agentJobs.runId, runId), eq(agentJobs.phase, phase)))
    .get();
}

/** At most `limit` log chunks of a job overlapping the bytes [start, end), in order. */
export function logChunksOverlapping(db: Db, jobId: string, start: number, end: number, limit: number) {
  return db
    .select()
    .from(agentJobLogChunks)
    .where(
      and(
        eq(agentJobLogChunks.jobId, jobId),
        lt(agentJobLogChunks.offset, end),
        sql`${agentJobLogChunks.offset} + ${agentJobLogChunks.length} > ${start}`,
      ),
    )
    .orderBy(asc(agentJobLogChunks.offset))
    .limit(limit)
    .all();
}
