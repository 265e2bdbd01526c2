/**
 * The Durable Object of one agent pool (decision N18). It holds the pool's agent sessions,
 * their pings, the waiting long polls and the queue of jobs, and allocates each job to
 * exactly one agent (a Durable Object runs one event at a time, so two polls can never both
 * take a job). It caches the hashes of the pool's agent tokens; the API tells it of a new
 * token or a revocation synchronously (N17), so a session call needs no D1 read.
 *
 * D1 is written on register, on a status change, when a job starts or ends, and once a
 * minute per pool for the last pings of all its agents (one batch) and a reconciliation of
 * the queue with D1 (one query): an idle agent costs well under the design's 2 queries a
 * minute. While agents are connected, an alarm runs at the next deadline: an agent silent
 * for KEYWAY_AGENT_UNKNOWN_AFTER reads `unknown`, for KEYWAY_AGENT_ERRORED_AFTER `errored`
 * and its job errors ("agent <name> stopped responding"); a job past its cap errors ("job
 * exceeded its time limit (<limit>)") and is signalled `cancel`; a job handed out and not
 * started within a minute goes back to the queue.
 *
 * Every method is a typed RPC method returning a Result-like value; nothing throws across
 * the stub for an expected outcome. State lives in the object's synchronous KV storage, so
 * an evicted object resumes with its sessions and queue.
 */
import { DurableObject } from "cloudflare:workers";
import { and, eq, inArray } from "drizzle-orm";
import { createDb, type Db } from "../../db/client";
import { countD1Calls, guardEnv } from "../../db/d1-guard";
import { agents, runs } from "../../db/schema/nocode";
import { toHex, utf8 } from "../../lib/bytes";
import { keyedHash } from "../../lib/crypto/hmac";
import { type JobDescription, type JobSignal, REGISTRY_TOKEN_PURPOSE } from "../agent-pools/job-queue";
import { newId, randomAlphanumeric } from "../ids";
import { EXACT_VERSION, parseConstraint, parseVersion, satisfies } from "../releases/version-constraints";
import { endJobWithoutAgent, queuedJobsOfPool, startJobStatements, tellRolloutOfRun } from "./jobs";
import { type AgentStatus, agentStatusQuery, poolTokens } from "./repo";
import { agentSettings, durationText } from "./settings";

/** A registered agent's session. */
interface Session {
  agentId: string;
  name: string;
  version: string;
  engineName: string;
  engineVersion: string;
  tokenId: string;
  /** SHA-256 (hex) of the session secret. */
  sessionHash: string;
  ip: string | null;
  status: AgentStatus;
  lastPingAt: number;
  /** The last ping written to D1. */
  flushedPingAt: number;
  jobId: string | null;
}

interface QueuedJob extends JobDescription {
  reservedBy: string | null;
  reservedAt: number | null;
  /** The `status_reason` last written to the run. */
  reason: string | null;
}

interface RunningJob {
  id: string;
  runId: string;
  phase: JobDescription["phase"];
  agentId: string;
  expiresAt: number;
  limitMs: number;
  /** What the agent's next ping answer tells it (N19a): `cancel` (SIGINT) or `force-cancel` (SIGKILL). */
  signal: JobSignal | null;
  /**
   * When the job ended without its agent (past its cap, or force-canceled): the entry stays
   * for the ping's signal until the agent's next poll or the token's grace. Undefined in
   * entries stored before N19a, whose signal meant "ended at its cap".
   */
  endedAt?: number | null;
}

/** A signal for a job this object does not run yet (its start may be mid-way; N19a). */
interface PendingSignal {
  signal: JobSignal;
  at: number;
}

interface PoolMeta {
  poolId: string;
  poolName: string;
  organization: string;
}

/** What a session call presents (docs/agent-protocol.md): hashes only, never the secrets. */
export interface SessionAuth {
  tokenHash: string;
  agentId: string;
  sessionHash: string;
}

/** An expected refusal, rendered by the protocol as a JSON:API error. */
export interface PoolRefusal {
  ok: false;
  status: 401 | 404 | 409;
  detail: string;
}

/** A job handed to an agent by `start`. */
export interface StartedJob {
  ok: true;
  jobToken: string;
  expiresAt: number;
  job: JobDescription;
}

/** The agent's view of a job: the description it polls for. */
export type PolledJob = JobDescription;

/** Purposes of the keyed hashes of job and registry tokens (B2). */
export const JOB_TOKEN_PURPOSE = "agent-job-token";

/** A job not started this long after it was handed out goes back to the queue. */
export const RESERVATION_MS = 60_000;
/** How long a job past its cap stays the agent's, so it can finish it and upload its state (N18). */
const JOB_GRACE_MS = 10 * 60_000;
/** A signal for a job that never started here is forgotten after this long. */
const PENDING_SIGNAL_MS = 10 * 60_000;
/** D1 sync (last pings, queue reconciliation) at most this often. */
const SYNC_INTERVAL_MS = 60_000;
/** The longest long poll (N18). */
export const LONG_POLL_MAX_MS = 30_000;

const LIVE: readonly AgentStatus[] = ["idle", "busy", "unknown"];

/** When a running entry's job ended without its agent, or null while it runs. */
function endedAtOf(job: RunningJob): number | null {
  if (job.endedAt !== undefined) return job.endedAt;
  // Stored before N19a: a signal meant the job ended at its cap.
  return job.signal === null ? null : job.expiresAt;
}

/** SHA-256 (hex) of a secret (session secrets are random: a plain digest suffices). */
export async function sha256Hex(value: string): Promise<string> {
  return toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", utf8(value))));
}

/** Whether an engine version satisfies a workspace's `engine-version` (an exact one must match exactly). */
export function engineSatisfies(engineVersion: string, constraint: string): boolean {
  const wanted = constraint.trim();
  if (EXACT_VERSION.test(wanted)) return engineVersion === wanted;
  const terms = parseConstraint(wanted);
  const version = parseVersion(engineVersion);
  return terms !== null && version !== null && satisfies(version, terms);
}

/** The registry token of a job, derived from its job token (so `inputs` can show it while only hashes are stored). */
export async function registryTokenOf(env: Pick<Env, "KEYWAY_HASH_KEY">, jobToken: string): Promise<string> {
  const digest = await keyedHash(env.KEYWAY_HASH_KEY, `${REGISTRY_TOKEN_PURPOSE}:derive`, jobToken);
  // HCP's token shape (`<14>.atlasv1.<rest>`), so Terraform's credential handling accepts it.
  return `${digest.slice(0, 14)}.atlasv1.${digest.slice(14)}`;
}

export class AgentPool extends DurableObject<Env> {
  private readonly kv: SyncKvStorage;
  private meta: PoolMeta | null = null;
  private readonly sessions = new Map<string, Session>();
  private readonly queue = new Map<string, QueuedJob>();
  private readonly running = new Map<string, RunningJob>();
  /** N19a: signals for jobs not (yet) running here, by job id. */
  private readonly pendingSignals = new Map<string, PendingSignal>();
  /** N20: workspaces a user locked; their queued plan jobs wait. */
  private readonly lockedWorkspaces = new Set<string>();
  /** Waiting long polls by agent id. */
  private readonly waiters = new Map<string, (job: JobDescription | null) => void>();
  /** Token hash → token id; null until loaded from D1. */
  private tokens: Map<string, string> | null = null;
  private lastSyncAt = 0;
  /** D1 round trips this object made since it started (N18's budget; `npm run bench` reads it). */
  private readonly d1 = { calls: 0 };

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.kv = ctx.storage.kv;
    ctx.blockConcurrencyWhile(async () => {
      this.meta = this.kv.get<PoolMeta>("meta") ?? null;
      for (const [, s] of this.kv.list<Session>({ prefix: "session:" })) this.sessions.set(s.agentId, s);
      for (const [, j] of this.kv.list<QueuedJob>({ prefix: "queued:" })) this.queue.set(j.id, j);
      for (const [, j] of this.kv.list<RunningJob>({ prefix: "running:" })) this.running.set(j.id, j);
      for (const [, ws] of this.kv.list<string>({ prefix: "locked:" })) this.lockedWorkspaces.add(ws);
      for (const [key, p] of this.kv.list<PendingSignal>({ prefix: "signal:" }))
        this.pendingSignals.set(key.slice("signal:".length), p);
      this.lastSyncAt = Date.now();
    });
  }

  private db(): Db {
    return createDb(countD1Calls(guardEnv(this.env).DB, this.d1));
  }

  /** The D1 round trips this object made since it started, and its live sessions. */
  async d1Usage(): Promise<{ calls: number; liveSessions: number }> {
    return {
      calls: this.d1.calls,
      liveSessions: [...this.sessions.values()].filter((s) => LIVE.includes(s.status)).length,
    };
  }

  private settings() {
    return agentSettings(this.env);
  }

  private setMeta(meta: PoolMeta): void {
    if (this.meta?.poolId === meta.poolId && this.meta.poolName === meta.poolName) return;
    this.meta = meta;
    this.kv.put("meta", meta);
  }

  private save(s: Session): void {
    this.kv.put(`session:${s.agentId}`, s);
  }

  private saveQueued(j: QueuedJob): void {
    this.kv.put(`queued:${j.id}`, j);
  }

  private dropQueued(id: string): void {
    this.queue.delete(id);
    this.kv.delete(`queued:${id}`);
  }

  private saveRunning(j: RunningJob): void {
    this.kv.put(`running:${j.id}`, j);
  }

  private dropRunning(id: string): void {
    this.running.delete(id);
    this.kv.delete(`running:${id}`);
  }

  private async loadTokens(poolId: string): Promise<Map<string, string>> {
    if (!this.tokens) {
      const rows = await poolTokens(this.db(), poolId);
      this.tokens = new Map(rows.map((r) => [r.hash, r.id]));
    }
    return this.tokens;
  }

  /** The session `auth` presents, or a 401 refusal. */
  private async authenticate(auth: SessionAuth): Promise<Session | PoolRefusal> {
    const refusal: PoolRefusal = {
      ok: false,
      status: 401,
      detail: "the agent session has ended or its credentials are not valid; register again",
    };
    const session = this.sessions.get(auth.agentId);
    if (!session || !this.meta || !LIVE.includes(session.status)) return refusal;
    const tokens = await this.loadTokens(this.meta.poolId);
    if (tokens.get(auth.tokenHash) !== session.tokenId || session.sessionHash !== auth.sessionHash) return refusal;
    return session;
  }

  /** A call from the agent: it pinged. An `unknown` agent comes back. */
  private async touch(s: Session, now: number): Promise<void> {
    s.lastPingAt = now;
    if (s.status === "unknown") {
      s.status = s.jobId ? "busy" : "idle";
      await agentStatusQuery(this.db(), s.agentId, s.status, now, now).run();
      s.flushedPingAt = now;
    }
    this.save(s);
    await this.scheduleAlarm();
  }

  /** N18 register: a new agent and its session (the API found the token's pool in D1). */
  async register(input: {
    meta: PoolMeta;
    tokenHash: string;
    tokenId: string;
    name: string;
    version: string;
    engineName: string;
    engineVersion: string;
    ip: string | null;
  }): Promise<{ ok: true; agentId: string; sessionSecret: string } | PoolRefusal> {
    this.setMeta(input.meta);
    let tokens = await this.loadTokens(input.meta.poolId);
    if (tokens.get(input.tokenHash) !== input.tokenId) {
      // The API found the token in D1 just now; a notice of it may have been lost: read again once.
      this.tokens = null;
      tokens = await this.loadTokens(input.meta.poolId);
    }
    if (tokens.get(input.tokenHash) !== input.tokenId) {
      return { ok: false, status: 401, detail: "the agent token is not valid" };
    }
    const now = Date.now();
    const agentId = newId("agent");
    const sessionSecret = `${input.meta.poolId}.${randomAlphanumeric(48)}`;
    const session: Session = {
      agentId,
      name: input.name,
      version: input.version,
      engineName: input.engineName,
      engineVersion: input.engineVersion,
      tokenId: input.tokenId,
      sessionHash: await sha256Hex(sessionSecret),
      ip: input.ip,
      status: "idle",
      lastPingAt: now,
      flushedPingAt: now,
      jobId: null,
    };
    await this.db()
      .insert(agents)
      .values({
        id: agentId,
        poolId: input.meta.poolId,
        organization: input.meta.organization,
        tokenId: input.tokenId,
        name: input.name,
        version: input.version,
        engineName: input.engineName,
        engineVersion: input.engineVersion,
        ipAddress: input.ip,
        status: "idle",
        lastPingAt: now,
        createdAt: now,
        updatedAt: now,
      })
      .run();
    this.sessions.set(agentId, session);
    this.save(session);
    await this.reconcile(now);
    await this.refreshReasons();
    await this.scheduleAlarm();
    return { ok: true, agentId, sessionSecret };
  }

  /** N18 ping: the signals for the agent's job; `exited` ends the session. */
  async ping(
    auth: SessionAuth,
    status: "idle" | "busy" | "exited",
  ): Promise<{ ok: true; signals: { jobId: string; signal: "cancel" | "force-cancel" }[] } | PoolRefusal> {
    const s = await this.authenticate(auth);
    if (!("agentId" in s)) return s;
    const now = Date.now();
    await this.touch(s, now);
    const signals = [...this.running.values()]
      .filter((j) => j.agentId === s.agentId && j.signal !== null)
      .map((j) => ({ jobId: j.id, signal: j.signal! }));
    if (status === "exited") await this.endSession(s, "exited", `agent ${s.name} exited during the job`, now);
    return { ok: true, signals };
  }

  /** N18 long poll: a job for this agent, or null after `waitMs`. */
  async nextJob(auth: SessionAuth, waitMs: number): Promise<{ ok: true; job: PolledJob | null } | PoolRefusal> {
    const s = await this.authenticate(auth);
    if (!("agentId" in s)) return s;
    await this.touch(s, Date.now());
    if (s.jobId) return { ok: true, job: null };
    // Polling again, the agent is done with any job that ended without it (N19a force-cancel, the cap).
    for (const j of [...this.running.values()])
      if (j.agentId === s.agentId && endedAtOf(j) !== null) this.dropRunning(j.id);
    const now = Date.now();
    const ready = this.allocate(s, now);
    if (ready) return { ok: true, job: ready };
    this.waiters.get(s.agentId)?.(null);
    const job = await new Promise<JobDescription | null>((resolve) => {
      const timer = setTimeout(() => finish(null), Math.min(Math.max(waitMs, 0), LONG_POLL_MAX_MS));
      const finish = (found: JobDescription | null) => {
        clearTimeout(timer);
        if (this.waiters.get(s.agentId) === finish) this.waiters.delete(s.agentId);
        resolve(found);
      };
      this.waiters.set(s.agentId, finish);
    });
    const current = this.sessions.get(s.agentId);
    if (current && LIVE.includes(current.status)) await this.touch(current, Date.now());
    return { ok: true, job };
  }

  /** The oldest queued job `s` can run and nobody holds, reserved for it. */
  private allocate(s: Session, now: number): JobDescription | null {
    for (const job of this.queue.values()) {
      if (job.reservedBy !== null && job.reservedBy !== s.agentId) continue;
      if (!engineSatisfies(s.engineVersion, job.engineConstraint)) continue;
      if (this.heldByLock(job)) continue;
      job.reservedBy = s.agentId;
      job.reservedAt = now;
      this.saveQueued(job);
      return job;
    }
    return null;
  }

  /** N20: a user's lock keeps a workspace's runs in `plan_queued` (an apply of a run already holding the lock goes on). */
  private heldByLock(job: QueuedJob): boolean {
    return job.phase === "plan" && this.lockedWorkspaces.has(job.workspaceId);
  }

  /** N20: a user locked or unlocked a workspace of this pool (told before the lock is written to D1). */
  async workspaceLock(workspaceId: string, locked: boolean): Promise<{ ok: true }> {
    if (locked) {
      this.lockedWorkspaces.add(workspaceId);
      this.kv.put(`locked:${workspaceId}`, workspaceId);
      // A job reserved but not started is released: start() refuses it while the lock holds.
      return { ok: true };
    }
    this.lockedWorkspaces.delete(workspaceId);
    this.kv.delete(`locked:${workspaceId}`);
    this.offer(Date.now());
    return { ok: true };
  }

  /** Offer queued jobs nobody holds to waiting polls. */
  private offer(now: number): void {
    for (const agentId of [...this.waiters.keys()]) {
      const s = this.sessions.get(agentId);
      const waiter = this.waiters.get(agentId);
      if (!s || !waiter || s.jobId || !LIVE.includes(s.status)) continue;
      const job = this.allocate(s, now);
      if (job) waiter(job);
    }
  }

  /** The API queued a job of this pool (after its D1 commit). */
  async enqueue(job: JobDescription): Promise<{ ok: true }> {
    this.setMeta({ poolId: job.poolId, poolName: job.poolName, organization: job.organization });
    if (this.queue.has(job.id) || this.running.has(job.id)) return { ok: true };
    const queued: QueuedJob = { ...job, reservedBy: null, reservedAt: null, reason: null };
    this.queue.set(job.id, queued);
    this.saveQueued(queued);
    this.offer(Date.now());
    await this.refreshReasons();
    await this.scheduleAlarm();
    return { ok: true };
  }

  /** Why each queued job waits, written to its run when it changes (N18: "the reason shown"). */
  private async refreshReasons(): Promise<void> {
    const writes = [];
    const db = this.db();
    for (const job of this.queue.values()) {
      const capable = [...this.sessions.values()].some(
        (s) => LIVE.includes(s.status) && engineSatisfies(s.engineVersion, job.engineConstraint),
      );
      const reason = capable
        ? `waiting for an agent of pool ${job.poolName}`
        : `waiting for an agent of pool ${job.poolName}: no registered agent runs an engine version satisfying ${job.engineConstraint}`;
      if (reason === job.reason) continue;
      job.reason = reason;
      this.saveQueued(job);
      writes.push(
        db
          .update(runs)
          .set({ statusReason: reason })
          .where(and(eq(runs.id, job.runId), inArray(runs.status, ["plan_queued", "apply_queued"]))),
      );
    }
    if (writes.length > 0) await db.batch(writes as [(typeof writes)[number], ...typeof writes]);
  }

  /** N18 start: the job and its token, if the job is this agent's to take. */
  async start(auth: SessionAuth, jobId: string): Promise<StartedJob | PoolRefusal> {
    const s = await this.authenticate(auth);
    if (!("agentId" in s)) return s;
    const now = Date.now();
    await this.touch(s, now);
    const job = this.queue.get(jobId);
    if (!job) {
      return this.running.has(jobId)
        ? { ok: false, status: 409, detail: "the job was already started" }
        : { ok: false, status: 404, detail: "no such job is queued in this pool" };
    }
    if (
      (job.reservedBy !== null && job.reservedBy !== s.agentId) ||
      !engineSatisfies(s.engineVersion, job.engineConstraint)
    )
      return { ok: false, status: 409, detail: "the job was allocated to another agent" };
    if (s.jobId) return { ok: false, status: 409, detail: "this agent already runs a job" };
    if (this.heldByLock(job)) return { ok: false, status: 409, detail: "the workspace is locked" };

    const settings = this.settings();
    const limitMs = job.phase === "plan" ? settings.planJobLimitMs : settings.applyJobLimitMs;
    const jobToken = randomAlphanumeric(64);
    const [tokenHash, registryTokenHash] = await Promise.all([
      keyedHash(this.env.KEYWAY_HASH_KEY, JOB_TOKEN_PURPOSE, jobToken),
      registryTokenOf(this.env, jobToken).then((t) => keyedHash(this.env.KEYWAY_HASH_KEY, REGISTRY_TOKEN_PURPOSE, t)),
    ]);
    const expiresAt = now + limitMs;
    const db = this.db();
    const [jobMoved, runMoved] = await db.batch(
      startJobStatements(
        db,
        job,
        {
          agentId: s.agentId,
          tokenHash,
          registryTokenHash,
          expiresAt,
          executionDetails: {
            mode: "agent",
            "agent-id": s.agentId,
            "agent-name": s.name,
            "agent-pool-id": job.poolId,
            "agent-pool-name": job.poolName,
            "engine-name": s.engineName,
            "engine-version": s.engineVersion,
          },
        },
        now,
      ),
    );
    this.dropQueued(job.id);
    if (jobMoved.length === 0) return { ok: false, status: 409, detail: "the job is no longer queued" };
    if (runMoved.length === 0) {
      await endJobWithoutAgent(db, job, "canceled", "the run is no longer waiting for this job", now);
      await agentStatusQuery(db, s.agentId, "idle", now).run();
      return { ok: false, status: 409, detail: "the run is no longer waiting for this job" };
    }
    s.status = "busy";
    s.jobId = job.id;
    s.flushedPingAt = now;
    this.save(s);
    const runningJob: RunningJob = {
      id: job.id,
      runId: job.runId,
      phase: job.phase,
      agentId: s.agentId,
      expiresAt,
      limitMs,
      signal: null,
      endedAt: null,
    };
    this.running.set(job.id, runningJob);
    this.saveRunning(runningJob);
    // N19a: a cancel asked while this start was under way (D1 had the job running first).
    const pending = this.pendingSignals.get(job.id);
    if (pending) {
      this.dropPendingSignal(job.id);
      this.applySignal(runningJob, pending.signal, now);
    }
    await this.scheduleAlarm();
    return { ok: true, jobToken, expiresAt, job };
  }

  /**
   * N19a (and N20's force-unlock): the API canceled a job of this pool (D1 already says so). A queued job leaves the
   * queue; a running one is signalled in its agent's next ping answer (`cancel`: the agent
   * interrupts the engine and finishes the job; `force-cancel`: it kills the engine, and the
   * agent is free at once). A job not known here yet (its start is mid-way) gets the signal
   * when it starts.
   */
  async jobCanceled(jobId: string, signal: JobSignal = "cancel"): Promise<{ ok: true }> {
    const now = Date.now();
    const running = this.running.get(jobId);
    if (running) {
      this.applySignal(running, signal, now);
      await this.scheduleAlarm();
      return { ok: true };
    }
    if (this.queue.has(jobId)) this.dropQueued(jobId);
    const pending: PendingSignal = { signal, at: now };
    this.pendingSignals.set(jobId, pending);
    this.kv.put(`signal:${jobId}`, pending);
    await this.scheduleAlarm();
    return { ok: true };
  }

  private dropPendingSignal(jobId: string): void {
    this.pendingSignals.delete(jobId);
    this.kv.delete(`signal:${jobId}`);
  }

  /** Record a signal for a running job; a force-cancel ended it, so its agent is free. */
  private applySignal(job: RunningJob, signal: JobSignal, now: number): void {
    if (job.signal !== "force-cancel") job.signal = signal;
    if (signal === "force-cancel" && endedAtOf(job) === null) {
      job.endedAt = now;
      const s = this.sessions.get(job.agentId);
      if (s && s.jobId === job.id) {
        s.jobId = null;
        if (s.status === "busy") s.status = "idle";
        this.save(s);
        this.offer(now);
      }
    }
    this.saveRunning(job);
  }

  /** A job ended (finished by its agent, or by the API): the agent is free again. */
  async jobEnded(jobId: string, agentId: string): Promise<{ ok: true }> {
    this.dropRunning(jobId);
    const s = this.sessions.get(agentId);
    if (s && s.jobId === jobId) {
      s.jobId = null;
      if (s.status === "busy") s.status = "idle";
      this.save(s);
    }
    return { ok: true };
  }

  /** N17: a new agent token of this pool. */
  async tokenAdded(hash: string, tokenId: string): Promise<{ ok: true }> {
    this.tokens?.set(hash, tokenId);
    return { ok: true };
  }

  /** N17: an agent token was deleted: its sessions end at once (next call 401, jobs canceled, `exited`). */
  async tokenRevoked(tokenId: string): Promise<{ ok: true }> {
    if (this.tokens) for (const [hash, id] of this.tokens) if (id === tokenId) this.tokens.delete(hash);
    const now = Date.now();
    for (const s of this.sessions.values()) {
      if (s.tokenId === tokenId && LIVE.includes(s.status))
        await this.endSession(s, "exited", `the agent token of agent ${s.name} was revoked`, now, "canceled");
    }
    return { ok: true };
  }

  /** N17: `DELETE /agents/:id`: the session ends at once and the agent is forgotten. */
  async removeAgent(agentId: string): Promise<{ ok: true }> {
    const s = this.sessions.get(agentId);
    if (s && LIVE.includes(s.status))
      await this.endSession(s, "exited", `agent ${s.name} was removed`, Date.now(), "canceled");
    this.sessions.delete(agentId);
    this.kv.delete(`session:${agentId}`);
    return { ok: true };
  }

  /** The live status and last ping of the pool's agents (N17 `GET …/agents`). */
  async statuses(): Promise<Record<string, { status: AgentStatus; lastPingAt: number }>> {
    const out: Record<string, { status: AgentStatus; lastPingAt: number }> = {};
    for (const s of this.sessions.values()) out[s.agentId] = { status: s.status, lastPingAt: s.lastPingAt };
    return out;
  }

  /**
   * End a session: its waiting poll gets nothing, a job it holds ends (`jobEnd`: errored or
   * canceled, with `message`), a job reserved for it goes back to the queue.
   */
  private async endSession(
    s: Session,
    status: "exited" | "errored",
    message: string,
    now: number,
    jobEnd: "errored" | "canceled" = "errored",
  ): Promise<void> {
    s.status = status;
    this.waiters.get(s.agentId)?.(null);
    const db = this.db();
    if (s.jobId) {
      const job = this.running.get(s.jobId);
      if (job) {
        if (await endJobWithoutAgent(db, job, jobEnd, message, now)) await tellRolloutOfRun(this.env, db, job.runId);
        this.dropRunning(job.id);
      }
      s.jobId = null;
    }
    for (const job of this.queue.values()) {
      if (job.reservedBy === s.agentId) {
        job.reservedBy = null;
        job.reservedAt = null;
        this.saveQueued(job);
      }
    }
    await agentStatusQuery(db, s.agentId, status, now, s.lastPingAt).run();
    s.flushedPingAt = s.lastPingAt;
    this.save(s);
    this.offer(now);
    await this.refreshReasons();
  }

  /** Reconcile the queue with D1 (a job whose notice was lost is picked up; one canceled meanwhile dropped). */
  private async reconcile(now: number): Promise<void> {
    if (!this.meta) return;
    this.lastSyncAt = now;
    const queued = await queuedJobsOfPool(this.db(), this.meta.poolId);
    const ids = new Set(queued.map((j) => j.id));
    for (const job of [...this.queue.values()]) if (!ids.has(job.id)) this.dropQueued(job.id);
    for (const job of queued) {
      if (this.queue.has(job.id) || this.running.has(job.id)) continue;
      const entry: QueuedJob = { ...job, reservedBy: null, reservedAt: null, reason: null };
      this.queue.set(job.id, entry);
      this.saveQueued(entry);
    }
    this.offer(now);
  }

  /** The next moment something is due, or null when nothing is. */
  private nextDeadline(): number | null {
    const { unknownAfterMs, erroredAfterMs } = this.settings();
    const due: number[] = [];
    let live = false;
    for (const s of this.sessions.values()) {
      if (s.status === "idle" || s.status === "busy") due.push(s.lastPingAt + unknownAfterMs);
      if (s.status === "unknown") due.push(s.lastPingAt + erroredAfterMs);
      if (LIVE.includes(s.status)) live = true;
    }
    for (const j of this.queue.values()) if (j.reservedAt !== null) due.push(j.reservedAt + RESERVATION_MS);
    for (const j of this.running.values()) {
      const endedAt = endedAtOf(j);
      due.push(endedAt === null ? j.expiresAt : endedAt + JOB_GRACE_MS);
    }
    for (const p of this.pendingSignals.values()) due.push(p.at + PENDING_SIGNAL_MS);
    if (live) due.push(this.lastSyncAt + SYNC_INTERVAL_MS);
    return due.length > 0 ? Math.min(...due) : null;
  }

  private async scheduleAlarm(): Promise<void> {
    const next = this.nextDeadline();
    if (next === null) return;
    const current = await this.ctx.storage.getAlarm();
    if (current === null || current > next) await this.ctx.storage.setAlarm(Math.max(next, Date.now()));
  }

  /** The deadlines: lost agents, lapsed reservations, job caps, the minute's D1 sync. */
  override async alarm(): Promise<void> {
    const now = Date.now();
    const { unknownAfterMs, erroredAfterMs } = this.settings();
    const db = this.db();
    for (const s of [...this.sessions.values()]) {
      if ((s.status === "idle" || s.status === "busy") && now >= s.lastPingAt + unknownAfterMs) {
        s.status = "unknown";
        await agentStatusQuery(db, s.agentId, "unknown", now, s.lastPingAt).run();
        s.flushedPingAt = s.lastPingAt;
        this.save(s);
      }
      if (s.status === "unknown" && now >= s.lastPingAt + erroredAfterMs) {
        await this.endSession(s, "errored", `agent ${s.name} stopped responding`, now);
      }
    }
    for (const job of this.queue.values()) {
      if (job.reservedAt !== null && now >= job.reservedAt + RESERVATION_MS) {
        job.reservedBy = null;
        job.reservedAt = null;
        this.saveQueued(job);
      }
    }
    for (const job of [...this.running.values()]) {
      const endedAt = endedAtOf(job);
      if (endedAt === null && now >= job.expiresAt) {
        const limit = `job exceeded its time limit (${durationText(job.limitMs)})`;
        if (await endJobWithoutAgent(db, job, "errored", limit, now)) await tellRolloutOfRun(this.env, db, job.runId);
        job.signal ??= "cancel";
        job.endedAt = job.expiresAt;
        this.saveRunning(job);
      } else if (endedAt !== null && now >= endedAt + JOB_GRACE_MS) {
        // Its token's grace is over and the agent never finished it: the agent is free again.
        await this.jobEnded(job.id, job.agentId);
      }
    }
    for (const [jobId, p] of [...this.pendingSignals])
      if (now >= p.at + PENDING_SIGNAL_MS) this.dropPendingSignal(jobId);
    if (now >= this.lastSyncAt + SYNC_INTERVAL_MS) await this.sync(now);
    this.offer(now);
    const next = this.nextDeadline();
    if (next !== null) await this.ctx.storage.setAlarm(Math.max(next, now + 1));
  }

  /** The minute's D1 work: every agent's last ping in one batch, then the queue's reconciliation. */
  private async sync(now: number): Promise<void> {
    const db = this.db();
    const pings = [...this.sessions.values()].filter((s) => LIVE.includes(s.status) && s.lastPingAt > s.flushedPingAt);
    if (pings.length > 0) {
      const [first, ...rest] = pings.map((s) => agentStatusQuery(db, s.agentId, s.status, now, s.lastPingAt));
      await db.batch([first!, ...rest]);
      for (const s of pings) {
        s.flushedPingAt = s.lastPingAt;
        this.save(s);
      }
    }
    // Sessions ended long ago are forgotten (their rows stay in D1).
    for (const s of [...this.sessions.values()]) {
      if (!LIVE.includes(s.status) && now - s.lastPingAt > 24 * 3600_000) {
        this.sessions.delete(s.agentId);
        this.kv.delete(`session:${s.agentId}`);
      }
    }
    if ([...this.sessions.values()].some((s) => LIVE.includes(s.status))) await this.reconcile(now);
    else this.lastSyncAt = now;
  }
}
