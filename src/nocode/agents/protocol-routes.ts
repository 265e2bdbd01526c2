/**
 * The agent protocol under `/api/agent/v1` (decision N18; docs/agent-protocol.md is its
 * contract). Session calls carry the pool's agent token and the session the pool's Durable
 * Object issued; they are answered by that object (./pool-object.ts) without D1. Job calls
 * carry a job token, bound to one job of one run and to the agent that started it, and
 * read and write D1 and R2 (run data encrypted at rest, N20). Errors are JSON:API error
 * documents, as in /api/v2. Agent tokens authenticate here and nowhere else (N17).
 */
import { type Context, Hono } from "hono";
import * as v from "valibot";
import agentProgram from "../../../agent/keyway-agent";
import type { AppEnv } from "../../app-env";
import { createDb, type Db } from "../../db/client";
import { fromUtf8 } from "../../lib/bytes";
import { keyedHash } from "../../lib/crypto/hmac";
import { BodyError, readLimitedBytes } from "../../lib/http/body";
import { logError } from "../../lib/log";
import { type JsonPlanSummary, JsonPlanSummaryScanner } from "../../lib/terraform/json-plan";
import { bearerToken, hashNocodeToken } from "../access/auth";
import { JSONAPI_MEDIA_TYPE, NocodeError } from "../errors";
import { isId } from "../ids";
import type { Plan } from "../planner";
import { findModuleVersionById } from "../registry/repo";
import { errorObject } from "../request/answers";
import { operation } from "../request/operation";
import { errorRun } from "../runs/lifecycle";
import { findRun, recordPlanningRunPlanQuery } from "../runs/repo";
import { openAgentInputs } from "./inputs";
import { finishJob, jobDocument } from "./jobs";
import {
  JOB_TOKEN_PURPOSE,
  LONG_POLL_MAX_MS,
  type PoolRefusal,
  registryTokenOf,
  type SessionAuth,
  sha256Hex,
} from "./pool-object";
import { poolStub } from "./pool-stub";
import {
  type AgentJobRow,
  advanceJobLogQuery,
  findAgentToken,
  findJobByTokenHash,
  findJobLogLength,
  findPlanJobOfRun,
  findRunData,
  insertLogChunkQuery,
  updateRunningJobQuery,
} from "./repo";
import {
  insertRunDataQuery,
  openRunData,
  type RunDataKind,
  ScannedUploadError,
  storeRunData,
  storeRunDataBytes,
  storeScannedStream,
} from "./run-data";
import { agentSettings } from "./settings";
import { currentEngineState, recordStoredEngineState, type StoredState, storeStateStream } from "./state-upload";

/** Where the protocol is mounted (src/index.ts). */
export const AGENT_PROTOCOL_PREFIX = "/api/agent/v1";

/** N18/N20 limits, in bytes. */
export const LIMITS = {
  logChunk: 1024 * 1024,
  logPerPhase: 16 * 1024 * 1024,
  state: 64 * 1024 * 1024,
  planFile: 64 * 1024 * 1024,
  jsonPlan: 64 * 1024 * 1024,
  lockFile: 1024 * 1024,
} as const;

/** How long after its job ended a job token still serves `finish`, log appends and the state upload. */
export const JOB_TOKEN_GRACE_MS = 10 * 60_000;

const PING_INTERVAL_SECONDS = 10;

type ProtocolEnv = AppEnv;

/** An error of the protocol: its status, a title and a detail for the operator's log. */
class ProtocolError extends Error {
  constructor(
    readonly status: 400 | 401 | 404 | 409 | 413 | 426,
    readonly title: string,
    readonly detail: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(detail);
  }
}

const TITLES: Record<number, string> = {
  400: "bad request",
  401: "unauthorized",
  404: "not found",
  409: "conflict",
  413: "payload too large",
  426: "agent version too old",
};

const fail = (status: ProtocolError["status"], detail: string, extra: Record<string, unknown> = {}) =>
  new ProtocolError(status, TITLES[status]!, detail, extra);

const refused = (r: PoolRefusal) => fail(r.status, r.detail);

function errorResponse(err: ProtocolError): Response {
  return new Response(
    JSON.stringify({ errors: [{ status: String(err.status), title: err.title, detail: err.detail }], ...err.extra }),
    { status: err.status, headers: { "Content-Type": JSONAPI_MEDIA_TYPE, "Cache-Control": "no-store" } },
  );
}

export const agentProtocolApp = new Hono<ProtocolEnv>();

agentProtocolApp.onError((err, c) => {
  if (err instanceof ProtocolError) return errorResponse(err);
  if (err instanceof BodyError) {
    return err.problem.kind === "too_large"
      ? errorResponse(fail(413, `request body exceeds the limit of ${err.problem.limit} bytes`))
      : errorResponse(fail(400, "the body must be a JSON object"));
  }
  if (err instanceof NocodeError) return errorResponse(fail(400, err.detail ?? err.code));
  logError(c.get("requestId") ?? "", "agent protocol fault", err);
  return new Response(JSON.stringify({ errors: [{ status: "500", title: "internal server error" }] }), {
    status: 500,
    headers: { "Content-Type": JSONAPI_MEDIA_TYPE, "Cache-Control": "no-store" },
  });
});

agentProtocolApp.notFound(() => errorResponse(fail(404, "no such call in the agent protocol")));

agentProtocolApp.use("*", async (c, next) => {
  await next();
  c.header("Cache-Control", "no-store");
});

/** A JSON answer of the protocol. */
const json = (c: Context, body: unknown, status: 200 | 201 = 200) =>
  c.body(JSON.stringify(body), status, { "Content-Type": "application/json" });

/** Read and validate a small JSON body (400 naming the first problem). */
async function jsonBody<S extends v.GenericSchema>(c: Context, schema: S): Promise<v.InferOutput<S>> {
  let parsed: unknown;
  try {
    const text = fromUtf8(await readLimitedBytes(c.req.raw, 64 * 1024));
    parsed = text.trim() === "" ? {} : JSON.parse(text);
  } catch (err) {
    if (err instanceof BodyError && err.problem.kind === "too_large") throw err;
    throw fail(400, "the body must be JSON");
  }
  const result = v.safeParse(schema, parsed, { abortPipeEarly: true });
  if (!result.success) throw fail(400, result.issues[0]?.message ?? "the body is not valid");
  return result.output;
}

/** The pool token of a call (401 when absent or not shaped like one). */
function poolToken(c: Context): string {
  const token = bearerToken(c.req.raw.headers);
  if (!token?.includes(".atlasv1.") || token.length > 200) throw fail(401, "an agent token is required");
  return token;
}

/** The session a session call presents, and its pool (from the session secret). */
async function sessionOf(c: Context<ProtocolEnv>): Promise<{ poolId: string; auth: SessionAuth }> {
  const token = poolToken(c);
  const agentId = c.req.header("Keyway-Agent-Id") ?? "";
  const secret = c.req.header("Keyway-Agent-Session") ?? "";
  const poolId = secret.slice(0, secret.indexOf("."));
  if (!isId("agent", agentId) || secret.length > 200 || !isId("apool", poolId))
    throw fail(401, "Keyway-Agent-Id and Keyway-Agent-Session must name a registered agent's session");
  const [tokenHash, sessionHash] = await Promise.all([hashNocodeToken(c.env, token), sha256Hex(secret)]);
  return { poolId, auth: { tokenHash, agentId, sessionHash } };
}

const VERSION = /^[0-9]+\.[0-9]+\.[0-9]+$/;
const ENGINE_VERSION = /^[0-9]+\.[0-9]+\.[0-9]+(?:-[0-9A-Za-z.-]+)?$/;
const NAME_RULE = "name must be 1–255 characters without control characters";

const registerBody = v.object({
  name: v.pipe(
    v.string(NAME_RULE),
    v.minLength(1, NAME_RULE),
    v.maxLength(255, NAME_RULE),
    v.check((name) => ![...name].some((ch) => ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f), NAME_RULE),
  ),
  version: v.pipe(v.string("version must be MAJOR.MINOR.PATCH"), v.regex(VERSION, "version must be MAJOR.MINOR.PATCH")),
  engine: v.object(
    {
      name: v.picklist(["terraform", "tofu"], 'engine.name must be "terraform" or "tofu"'),
      version: v.pipe(
        v.string("engine.version must be a version such as 1.11.4"),
        v.regex(ENGINE_VERSION, "engine.version must be a version such as 1.11.4"),
      ),
    },
    "engine must be an object with name and version",
  ),
});

/** Whether MAJOR.MINOR.PATCH `a` is below `b`. */
function below(a: string, b: string): boolean {
  const x = a.split(".").map(Number);
  const y = b.split(".").map(Number);
  for (let i = 0; i < 3; i++) if (x[i]! !== y[i]!) return x[i]! < y[i]!;
  return false;
}

const pingBody = v.object({
  status: v.picklist(["idle", "busy", "exited"], 'status must be "idle", "busy" or "exited"'),
});

const finishBody = v.object({
  status: v.picklist(["finished", "errored", "canceled"], 'status must be "finished", "errored" or "canceled"'),
  message: v.optional(
    v.nullable(v.pipe(v.string("message must be a string"), v.maxLength(1000, "message is at most 1,000 characters"))),
  ),
});

// B14: every call is described for the OpenAPI document /api/v2/openapi.json serves.
const TAG = "agent protocol";
const jobAnswer = v.strictObject({
  id: v.string(),
  "run-id": v.string(),
  phase: v.picklist(["plan", "apply"]),
  "workspace-id": v.string(),
  "workspace-name": v.string(),
  organization: v.string(),
  destroy: v.boolean(),
  "engine-version-constraint": v.string(),
  "queued-at": v.string(),
});
const JSON_MEDIA = "application/json";
const bytesAnswer = (description: string, contentType: string) => ({
  description,
  contentType,
  schema: v.string(),
});
const noneYet = { description: "None (no state yet, or the plan job uploaded none)" };

const registerOp = operation({
  tag: TAG,
  summary: "Register an agent (pool token): a new agent id and session secret (N18)",
  body: registerBody,
  answers: {
    201: {
      description: "The agent's session",
      contentType: JSON_MEDIA,
      schema: v.strictObject({
        "agent-id": v.string(),
        "session-secret": v.string(),
        "ping-interval-seconds": v.number(),
        "minimum-version": v.string(),
        "agent-pool-id": v.string(),
      }),
    },
    426: {
      description: "The agent program is older than the server's minimum version",
      schema: v.strictObject({ errors: v.array(errorObject), "minimum-version": v.string() }),
    },
  },
});
const pingOp = operation({
  tag: TAG,
  summary: "Ping (session): the signals for the agent's job; `exited` ends the session (N18)",
  body: pingBody,
  answers: {
    200: {
      description: "Signals",
      contentType: JSON_MEDIA,
      schema: v.strictObject({
        signals: v.array(v.strictObject({ "job-id": v.string(), signal: v.picklist(["cancel", "force-cancel"]) })),
        "ping-interval-seconds": v.number(),
      }),
    },
  },
});
const nextJobOp = operation({
  tag: TAG,
  summary: "Long poll for a job (session): 200 with a job, or 204 after `wait` seconds (N18)",
  query: v.looseObject({ wait: v.optional(v.string()) }),
  answers: {
    200: {
      description: "A job reserved for this agent",
      contentType: JSON_MEDIA,
      schema: v.strictObject({ job: jobAnswer }),
    },
    204: { description: "No job came within the wait" },
  },
});
const startOp = operation({
  tag: TAG,
  summary: "Start a job reserved for this agent (session): the job token (N18)",
  answers: {
    200: {
      description: "The job and its token",
      contentType: JSON_MEDIA,
      schema: v.strictObject({ "job-token": v.string(), "expires-at": v.string(), job: jobAnswer }),
    },
  },
  errors: [409],
});
const configurationOp = operation({
  tag: TAG,
  summary: "The module tarball of the version recorded on the run (job token; N18)",
  answers: { 200: bytesAnswer("The configuration (.tar.gz)", "application/gzip") },
});
const variableAnswer = v.strictObject({ key: v.string(), value: v.string(), hcl: v.boolean(), sensitive: v.boolean() });
const inputsOp = operation({
  tag: TAG,
  summary: "The run's variables (sensitive ones included) and the job's registry token (job token; N18)",
  answers: {
    200: {
      description: "The inputs",
      contentType: JSON_MEDIA,
      schema: v.strictObject({
        "terraform-variables": v.array(variableAnswer),
        "env-variables": v.array(v.strictObject({ key: v.string(), value: v.string(), sensitive: v.boolean() })),
        registry: v.strictObject({ host: v.string(), token: v.string() }),
        "engine-version-constraint": v.string(),
        destroy: v.boolean(),
      }),
    },
  },
});
const stateGetOp = operation({
  tag: TAG,
  summary: "The workspace's current state (job token; N18, N20)",
  answers: {
    // The state document exactly as the engine wrote it (Terraform's state format, version 4).
    200: { description: "The state", contentType: JSON_MEDIA, schema: v.record(v.string(), v.unknown()) },
    204: noneYet,
  },
});
const planFileGetOp = operation({
  tag: TAG,
  summary: "The plan file the run's plan job uploaded (job token; N18)",
  answers: { 200: bytesAnswer("The plan file", "application/octet-stream"), 204: noneYet },
});
const lockFileGetOp = operation({
  tag: TAG,
  summary: "The lock file the run's plan job uploaded (job token; N18)",
  answers: { 200: bytesAnswer("The lock file", "text/plain"), 204: noneYet },
});
const logsOp = operation({
  tag: TAG,
  summary: "Append a chunk of the phase's log at `offset` (job token; ≤ 1 MiB, 16 MiB per phase; N18)",
  query: v.looseObject({ offset: v.string() }),
  answers: {
    200: { description: "The stored length", contentType: JSON_MEDIA, schema: v.strictObject({ length: v.number() }) },
    409: {
      description: "A gap: resend from the stored length",
      schema: v.strictObject({ errors: v.array(errorObject), meta: v.strictObject({ length: v.number() }) }),
    },
  },
  errors: [400, 413],
});
const uploadOp = (what: string, limit: string) =>
  operation({
    tag: TAG,
    summary: `Upload the ${what} (job token; raw bytes, ≤ ${limit}; N18, N20)`,
    answers: { 204: { description: "Stored" } },
    errors: [400, 409, 413],
  });
const stateUploadOp = operation({
  tag: TAG,
  summary: "Upload the new state (job token; ≤ 64 MiB; N20's serial and lineage rules)",
  answers: {
    200: {
      description: "A new state version, or the current one (a no-op)",
      contentType: JSON_MEDIA,
      schema: v.strictObject({ "state-version-id": v.string(), serial: v.number(), created: v.boolean() }),
    },
  },
  errors: [400, 409, 413],
});
const finishOp = operation({
  tag: TAG,
  summary: "Finish a job: finished, errored or canceled (job token; idempotent; N18)",
  body: finishBody,
  answers: {
    200: {
      description: "The job's recorded status",
      contentType: JSON_MEDIA,
      schema: v.strictObject({ job: v.strictObject({ id: v.string(), status: v.string() }) }),
    },
  },
  errors: [409],
});
const agentProgramOp = operation({
  tag: TAG,
  summary: "The agent program keyway-agent (no credential; N21)",
  answers: {
    200: {
      description: "The program",
      contentType: "text/javascript",
      schema: v.string(),
      headers: { "Keyway-Agent-SHA256": { description: "SHA-256 (hex) of the body" } },
    },
  },
});

agentProtocolApp.post("/register", registerOp, async (c) => {
  const token = poolToken(c);
  const db = createDb(c.env.DB);
  const tokenHash = await hashNocodeToken(c.env, token);
  const found = await findAgentToken(db, tokenHash);
  if (!found) throw fail(401, "the agent token is not valid");
  const body = await jsonBody(c, registerBody);
  const { minimumVersion } = agentSettings(c.env);
  if (below(body.version, minimumVersion)) {
    throw fail(426, `keyway-agent ${body.version} is below the minimum version ${minimumVersion}`, {
      "minimum-version": minimumVersion,
    });
  }
  const result = await poolStub(c.env, found.poolId).register({
    meta: { poolId: found.poolId, poolName: found.poolName, organization: found.organization },
    tokenHash,
    tokenId: found.tokenId,
    name: body.name,
    version: body.version,
    engineName: body.engine.name,
    engineVersion: body.engine.version,
    ip: c.req.header("CF-Connecting-IP") ?? null,
  });
  if (!result.ok) throw refused(result);
  return json(
    c,
    {
      "agent-id": result.agentId,
      "session-secret": result.sessionSecret,
      "ping-interval-seconds": PING_INTERVAL_SECONDS,
      "minimum-version": minimumVersion,
      "agent-pool-id": found.poolId,
    },
    201,
  );
});

agentProtocolApp.post("/ping", pingOp, async (c) => {
  const { poolId, auth } = await sessionOf(c);
  const { status } = await jsonBody(c, pingBody);
  const result = await poolStub(c.env, poolId).ping(auth, status);
  if (!result.ok) throw refused(result);
  return json(c, {
    signals: result.signals.map((s) => ({ "job-id": s.jobId, signal: s.signal })),
    "ping-interval-seconds": PING_INTERVAL_SECONDS,
  });
});

agentProtocolApp.get("/jobs/next", nextJobOp, async (c) => {
  const { poolId, auth } = await sessionOf(c);
  const raw = c.req.query("wait");
  let waitMs = LONG_POLL_MAX_MS;
  if (raw !== undefined) {
    if (!/^[0-9]{1,2}$/.test(raw) || Number(raw) < 1 || Number(raw) > 30)
      throw fail(400, "wait must be a whole number of seconds from 1 to 30");
    waitMs = Number(raw) * 1000;
  }
  const result = await poolStub(c.env, poolId).nextJob(auth, waitMs);
  if (!result.ok) throw refused(result);
  if (!result.job) return c.body(null, 204);
  return json(c, { job: jobDocument(result.job) });
});

agentProtocolApp.post("/jobs/:id/start", startOp, async (c) => {
  const { poolId, auth } = await sessionOf(c);
  const id = c.req.param("id");
  if (!isId("job", id)) throw fail(404, "no such job");
  const result = await poolStub(c.env, poolId).start(auth, id);
  if (!result.ok) throw refused(result);
  return json(c, {
    "job-token": result.jobToken,
    "expires-at": new Date(result.expiresAt).toISOString(),
    job: jobDocument(result.job),
  });
});

/**
 * What a job call may do after its job ended (N18: idempotent finish and log appends, and the
 * state upload; after a force-cancel, N19a, the state upload alone).
 */
type JobUse = "read" | "upload" | "after-end" | "state";

/** The job a job call's token is for; 401 for an unknown or lapsed token, 404 for another job or agent. */
async function jobOf(c: Context<ProtocolEnv>, db: Db, use: JobUse): Promise<{ job: AgentJobRow; token: string }> {
  const token = bearerToken(c.req.raw.headers);
  if (!token || token.length > 200) throw fail(401, "a job token is required");
  const job = await findJobByTokenHash(db, await keyedHash(c.env.KEYWAY_HASH_KEY, JOB_TOKEN_PURPOSE, token));
  if (!job) throw fail(401, "the job token is not valid");
  const agentId = c.req.header("Keyway-Agent-Id");
  if (job.id !== c.req.param("id") || (agentId !== undefined && agentId !== job.agentId))
    throw fail(404, "no such job for this job token");
  const now = Date.now();
  const ended = job.status !== "running" || (job.expiresAt !== null && now >= job.expiresAt);
  if (ended) {
    const endedAt = job.finishedAt ?? job.expiresAt ?? now;
    const allowed = job.forceCanceledAt !== null ? use === "state" : use === "after-end" || use === "state";
    if (!allowed || now >= endedAt + JOB_TOKEN_GRACE_MS)
      throw fail(
        401,
        job.forceCanceledAt !== null
          ? "the job was force-canceled: its token serves only the state upload"
          : `the job token is no longer valid: the job is ${job.status}`,
      );
  }
  return { job, token };
}

/** The run of a job. */
async function runOf(db: Db, job: AgentJobRow) {
  const run = await findRun(db, job.runId);
  if (!run) throw fail(404, "the job's run no longer exists");
  return run;
}

agentProtocolApp.get("/jobs/:id/configuration", configurationOp, async (c) => {
  const db = createDb(c.env.DB);
  const { job } = await jobOf(c, db, "read");
  const run = await runOf(db, job);
  // N18: the version recorded on the run, never the module's current pin.
  const version = await findModuleVersionById(db, run.moduleVersionId);
  const object = version?.tarballKey ? await c.env.MODULES.get(version.tarballKey) : null;
  if (!object) throw fail(404, `module version ${run.moduleVersion} of the run is no longer available`);
  return c.body(object.body, 200, { "Content-Type": "application/gzip" });
});

agentProtocolApp.get("/jobs/:id/inputs", inputsOp, async (c) => {
  const db = createDb(c.env.DB);
  const { job, token } = await jobOf(c, db, "read");
  const run = await runOf(db, job);
  const inputs = await openAgentInputs(c.env, run.id, run.agentInputs);
  return json(c, {
    "terraform-variables": inputs.engine,
    "env-variables": inputs.env.map(({ key, value, sensitive }) => ({ key, value, sensitive })),
    registry: { host: new URL(c.req.url).host, token: await registryTokenOf(c.env, token) },
    "engine-version-constraint": job.engineConstraint,
    destroy: false,
  });
});

/** Stream a stored object, or 204 when there is none. */
async function serveObject(c: Context<ProtocolEnv>, db: Db, objectId: string | null, contentType: string) {
  const row = objectId ? await findRunData(db, objectId) : undefined;
  const stream = row ? await openRunData(c.env, row) : null;
  if (!stream) return c.body(null, 204);
  return c.body(stream, 200, { "Content-Type": contentType });
}

agentProtocolApp.get("/jobs/:id/state", stateGetOp, async (c) => {
  const db = createDb(c.env.DB);
  const { job } = await jobOf(c, db, "read");
  const current = await currentEngineState(db, job.workspaceId);
  return serveObject(c, db, current?.objectId ?? null, "application/json");
});

/** The plan job of a job's run (an apply job reads what its plan uploaded). */
async function planJobOf(db: Db, job: AgentJobRow): Promise<AgentJobRow | undefined> {
  if (job.phase === "plan") return job;
  return findPlanJobOfRun(db, job.runId);
}

agentProtocolApp.get("/jobs/:id/plan-file", planFileGetOp, async (c) => {
  const db = createDb(c.env.DB);
  const { job } = await jobOf(c, db, "read");
  const plan = await planJobOf(db, job);
  return serveObject(c, db, plan?.planFileObjectId ?? null, "application/octet-stream");
});

agentProtocolApp.get("/jobs/:id/lock-file", lockFileGetOp, async (c) => {
  const db = createDb(c.env.DB);
  const { job } = await jobOf(c, db, "read");
  const plan = await planJobOf(db, job);
  return serveObject(c, db, plan?.lockFileObjectId ?? null, "text/plain; charset=utf-8");
});

const MIB = 1024 * 1024;
const limitText = (bytes: number) => (bytes % MIB === 0 ? `${bytes / MIB} MiB` : `${bytes} bytes`);

/** The declared length of an upload (null when not declared); 413 over `limit` (naming `what`). */
function uploadLength(c: Context, what: string, limit: number): number | null {
  const declared = c.req.header("Content-Length");
  if (declared === undefined) return null;
  if (!/^[0-9]{1,12}$/.test(declared)) throw fail(400, "Content-Length must be a number of bytes");
  const length = Number(declared);
  if (length > limit) throw fail(413, `${what} exceeds the limit of ${limitText(limit)}`);
  return length;
}

/** The whole body of an upload within `limit` (413 naming it). */
async function uploadBytes(c: Context, what: string, limit: number): Promise<Uint8Array> {
  uploadLength(c, what, limit);
  try {
    return await readLimitedBytes(c.req.raw, limit);
  } catch (err) {
    if (err instanceof BodyError && err.problem.kind === "too_large")
      throw fail(413, `${what} exceeds the limit of ${limitText(limit)}`);
    throw err;
  }
}

agentProtocolApp.put("/jobs/:id/logs", logsOp, async (c) => {
  const db = createDb(c.env.DB);
  const { job } = await jobOf(c, db, "after-end");
  const raw = c.req.query("offset");
  if (raw === undefined || !/^[0-9]{1,10}$/.test(raw)) throw fail(400, "offset must be a byte offset");
  const offset = Number(raw);
  const chunk = await uploadBytes(c, "log chunk", LIMITS.logChunk);
  const stored = job.logLength;
  if (offset > stored)
    throw fail(409, `the log has ${stored} bytes; send from offset ${stored}`, { meta: { length: stored } });
  const end = offset + chunk.length;
  // A retried chunk (or the part of one already stored) changes nothing.
  if (end <= stored) return json(c, { length: stored });
  if (end > LIMITS.logPerPhase) throw fail(413, `log exceeds the limit of ${limitText(LIMITS.logPerPhase)} per phase`);
  const tail = chunk.subarray(stored - offset);
  const object = await storeRunDataBytes(c.env, "log", tail);
  const [, , moved] = await db.batch([
    insertRunDataQuery(db, object),
    insertLogChunkQuery(db, job.id, stored, tail.length, object.id),
    advanceJobLogQuery(db, job.id, stored, end, Date.now()),
  ]);
  if (moved.length === 0) {
    // A concurrent append won: this chunk's object is not referenced.
    await c.env.RUN_DATA.delete(object.r2Key);
    const now = await findJobLogLength(db, job.id);
    const length = now?.length ?? stored;
    if (end <= length) return json(c, { length });
    throw fail(409, `the log has ${length} bytes; send from offset ${length}`, { meta: { length } });
  }
  return json(c, { length: end });
});

/** A plan-job upload of one artifact kind (N18): the object replaces the one the job held. */
async function storePlanArtifact(
  c: Context<ProtocolEnv>,
  db: Db,
  job: AgentJobRow,
  kind: Extract<RunDataKind, "plan-file" | "lock-file">,
  limit: number,
): Promise<Response> {
  if (job.phase !== "plan") throw fail(409, `the ${kind} is uploaded by the plan job`);
  const length = uploadLength(c, kind, limit);
  // Streamed when its length is declared; a chunked upload is read within the limit first.
  const object =
    length === null
      ? await storeRunDataBytes(c.env, kind, await uploadBytes(c, kind, limit))
      : await storeRunData(c.env, kind, c.req.raw.body ?? new Blob([]).stream(), length);
  const column = kind === "plan-file" ? { planFileObjectId: object.id } : { lockFileObjectId: object.id };
  await db.batch([insertRunDataQuery(db, object), updateRunningJobQuery(db, job.id, column, Date.now())]);
  return c.body(null, 204);
}

agentProtocolApp.put("/jobs/:id/plan-file", uploadOp("plan file", "64 MiB"), async (c) => {
  const db = createDb(c.env.DB);
  const { job } = await jobOf(c, db, "upload");
  return storePlanArtifact(c, db, job, "plan-file", LIMITS.planFile);
});

agentProtocolApp.put("/jobs/:id/lock-file", uploadOp("lock file", "1 MiB"), async (c) => {
  const db = createDb(c.env.DB);
  const { job } = await jobOf(c, db, "upload");
  return storePlanArtifact(c, db, job, "lock-file", LIMITS.lockFile);
});

agentProtocolApp.put("/jobs/:id/json-plan", uploadOp("JSON plan", "64 MiB"), async (c) => {
  const db = createDb(c.env.DB);
  const { job } = await jobOf(c, db, "upload");
  if (job.phase !== "plan") throw fail(409, "the JSON plan is uploaded by the plan job");
  uploadLength(c, "JSON plan", LIMITS.jsonPlan);
  // N20: taken as a stream (a JSON plan reaches 64 MiB): summarised, hashed and stored as it arrives.
  let stored: Awaited<ReturnType<typeof storeScannedStream<JsonPlanSummary>>>;
  try {
    stored = await storeScannedStream(
      c.env,
      "json-plan",
      c.req.raw.body ?? new Blob([]).stream(),
      { limit: LIMITS.jsonPlan, limitText: limitText(LIMITS.jsonPlan), what: "JSON plan" },
      new JsonPlanSummaryScanner(),
    );
  } catch (err) {
    if (err instanceof ScannedUploadError && err.kind === "too_large")
      throw fail(413, `JSON plan exceeds the limit of ${limitText(LIMITS.jsonPlan)}`);
    if (err instanceof ScannedUploadError) throw fail(400, err.message);
    throw err;
  }
  const { summary, object } = stored;
  const plan: Plan = {
    hasChanges: summary.hasChanges,
    additions: summary.additions,
    changes: summary.changes,
    destructions: summary.destructions,
    imports: summary.imports,
    resourceChanges: summary.resourceChanges.map((r) => ({
      address: r.address,
      actions: r.actions as Plan["resourceChanges"][number]["actions"],
    })),
    addresses: summary.addresses,
  };
  const now = Date.now();
  await db.batch([
    insertRunDataQuery(db, object),
    updateRunningJobQuery(db, job.id, { jsonPlanObjectId: object.id }, now),
    recordPlanningRunPlanQuery(db, job.runId, JSON.stringify(plan), now),
  ]);
  return c.body(null, 204);
});

agentProtocolApp.put("/jobs/:id/state", stateUploadOp, async (c) => {
  const db = createDb(c.env.DB);
  const { job } = await jobOf(c, db, "state");
  if (job.phase !== "apply") throw fail(409, "the state is uploaded by the apply job");
  uploadLength(c, "state", LIMITS.state);
  // N20: taken as a stream (a state reaches 64 MiB), under the rules shared with the recovery upload.
  let stored: StoredState;
  try {
    stored = await storeStateStream(
      c.env,
      c.req.raw.body ?? new Blob([]).stream(),
      LIMITS.state,
      limitText(LIMITS.state),
    );
  } catch (err) {
    if (err instanceof ScannedUploadError && err.kind === "too_large")
      throw fail(413, `state exceeds the limit of ${limitText(LIMITS.state)}`);
    if (err instanceof ScannedUploadError) throw fail(400, err.message);
    throw err;
  }
  const recorded = await recordStoredEngineState(
    c.env,
    db,
    job.workspaceId,
    job.runId,
    stored.summary,
    stored.md5,
    stored.object,
  );
  if (recorded.kind === "refused") {
    await errorRun(db, job.runId, recorded.message, ["planning", "applying"]);
    throw fail(409, recorded.message);
  }
  return json(c, {
    "state-version-id": recorded.id,
    serial: recorded.serial,
    created: recorded.kind === "created",
  });
});

agentProtocolApp.post("/jobs/:id/finish", finishOp, async (c) => {
  const db = createDb(c.env.DB);
  const { job } = await jobOf(c, db, "after-end");
  const body = await jsonBody(c, finishBody);
  const outcome = await finishJob(c.env, db, job, { status: body.status, message: body.message ?? null });
  if ("error" in outcome) throw fail(409, outcome.error);
  if (job.agentId) await poolStub(c.env, job.poolId).jobEnded(job.id, job.agentId);
  return json(c, { job: { id: job.id, status: outcome.status } });
});

/** The agent program's SHA-256, computed once per isolate. */
let agentProgramDigest: string | undefined;

agentProtocolApp.get("/agent.mjs", agentProgramOp, async (c) => {
  agentProgramDigest ??= await sha256Hex(agentProgram);
  return c.body(agentProgram, 200, {
    "Content-Type": "text/javascript; charset=utf-8",
    "Keyway-Agent-SHA256": agentProgramDigest,
  });
});
