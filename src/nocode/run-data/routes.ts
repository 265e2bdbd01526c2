import { type Context, Hono } from "hono";
import * as v from "valibot";
import type { Db } from "../../db/client";
import { SIGNED_LINK_HEADERS } from "../../lib/crypto/signed-link";
import { type AgentJobRow, findRunData } from "../agents/repo";
import { openRunData, readRunData } from "../agents/run-data";
import { agentSettings } from "../agents/settings";
import type { NocodeEnv } from "../env";
import { badRequest, nocodeErrorResponse, notFound } from "../errors";
import { operation } from "../request/operation";
import { jsonApi } from "../respond";
import { rights, scope } from "../route-rights";
import { findRun, findRunByPlanId, type RunRow } from "../runs/repo";
import {
  applyDocumentAnswer,
  applyIdOf,
  applyResource,
  planDocumentAnswer,
  planJsonOutput,
  planOf,
  planResource,
  planStatus,
} from "../runs/serialize";
import { runDataLink, runDataLinkValid, signedLinkRefused } from "./links";
import { findJobOfRun, logChunksOverlapping } from "./repo";

/** B23: the JSON plan link's lifetime. */
const JSON_PLAN_LINK_SECONDS = 60;
/** N20: a log link stays valid until this long after its phase ends. */
const LOG_AFTER_END_MS = 3600 * 1000;
/** The most log bytes one read answers (go-tfe asks for its buffer's size, 32 KiB by default). */
const LOG_READ_MAX = 1024 * 1024;

const STX = 0x02;
const ETX = 0x03;

/** The run `:id`. */
const runById = scope(async (c) => {
  const run = await findRun(c.var.db, c.req.param("id") ?? "");
  return run && { resource: run, organization: run.organization };
});

/** The run of the plan `:id`. */
const runByPlanId = scope(async (c) => {
  const run = await findRunByPlanId(c.var.db, c.req.param("id") ?? "");
  return run && { resource: run, organization: run.organization };
});

/** N20: 204 while the plan runs, then 307 to the signed JSON plan; 404 for a plan that ended without one. */
async function jsonOutputAnswer(c: Context<NocodeEnv>, run: RunRow): Promise<Response> {
  const status = planStatus(run);
  if (status === "errored" || status === "unreachable") throw notFound();
  if (!planOf(run) || status !== "finished") return c.body(null, 204, { "Cache-Control": "no-store" });
  const link = await runDataLink(c.env, new URL(c.req.url).origin, "jsonPlan", run.planId, JSON_PLAN_LINK_SECONDS);
  return c.body(null, 307, { Location: link, "Cache-Control": "no-store" });
}

const jsonOutputOp = () =>
  operation({
    tag: "runs",
    summary:
      "A plan's JSON output (N20; manage-workspaces, user or team tokens): 204 until the plan finishes, then 307 to a signed link valid 60 s; 404 when the plan ended without one",
    answers: {
      204: { description: "The plan has not finished yet" },
      307: {
        description: "The JSON plan is at the signed link in Location",
        headers: { Location: { description: "The signed link (B23)" } },
      },
    },
  });

/** Routes of run data (json-output, the signed JSON plan and logs). */
export const runDataRoutes = new Hono<NocodeEnv>();

runDataRoutes.get(
  "/plans/:id/json-output",
  rights({ right: "run-workspaces" }, { scope: runByPlanId }),
  jsonOutputOp(),
  async (c) => jsonOutputAnswer(c, runByPlanId.of(c)),
);

runDataRoutes.get(
  "/runs/:id/plan/json-output",
  rights({ right: "run-workspaces" }, { scope: runById }),
  jsonOutputOp(),
  async (c) => jsonOutputAnswer(c, runById.of(c)),
);

runDataRoutes.get(
  "/signed/plans/:id/json-output",
  rights({ caller: "public" }),
  operation({
    tag: "runs",
    summary: "A plan's JSON output through its signed link (B23: 60 s; no token)",
    answers: {
      200: { description: "Terraform's JSON plan format", contentType: "application/json", schema: v.unknown() },
    },
    errors: [404],
  }),
  async (c) => {
    const id = c.req.param("id");
    if (!(await runDataLinkValid(c.env, "jsonPlan", id, c.req.query()))) return signedLinkRefused();
    const run = await findRunByPlanId(c.var.db, id);
    const plan = run ? planOf(run) : null;
    if (!run || !plan) return signedLinkRefused();
    const headers = { ...SIGNED_LINK_HEADERS, "Content-Type": "application/json" };
    if (run.executionMode === "agent") {
      const job = await findJobOfRun(c.var.db, run.id, "plan");
      const row = job?.jsonPlanObjectId ? await findRunData(c.var.db, job.jsonPlanObjectId) : undefined;
      const stream = row ? await openRunData(c.env, row) : null;
      if (!stream) return signedLinkRefused();
      return c.body(stream, 200, headers);
    }
    return c.body(JSON.stringify(planJsonOutput(run, plan)), 200, headers);
  },
);

/** The run and phase a log id names. */
async function phaseOfLogId(db: Db, id: string): Promise<{ run: RunRow; phase: "plan" | "apply" } | undefined> {
  const phase = id.startsWith("plan-") ? "plan" : id.startsWith("apply-") ? "apply" : null;
  if (!phase) return undefined;
  const planId = phase === "plan" ? id : `plan-${id.slice("apply-".length)}`;
  const run = await findRunByPlanId(db, planId);
  return run && { run, phase };
}

const PLAN_ENDED: readonly string[] = ["planned", "confirmed", "apply_queued", "applying", "applied"];
const APPLY_ENDED: readonly string[] = ["applied"];
const RUN_ENDED: readonly string[] = ["planned_and_finished", "discarded", "errored", "canceled"];

/**
 * When a phase ended (its job's end for an agent run, else the run's last change once the
 * run moved past the phase), or null while it may still write its log.
 */
function phaseEndedAt(run: RunRow, phase: "plan" | "apply", job: AgentJobRow | undefined): number | null {
  if (job) return job.status === "queued" || job.status === "running" ? null : (job.finishedAt ?? job.updatedAt);
  const ended = (phase === "plan" ? PLAN_ENDED : APPLY_ENDED).includes(run.status) || RUN_ENDED.includes(run.status);
  return ended ? run.updatedAt : null;
}

/**
 * The `log-read-url` of a run's phase (B23: until one hour after the phase ends; while it
 * runs, until an hour after its job's time limit), or null once that has passed.
 */
export async function logReadUrl(
  c: Context<NocodeEnv>,
  run: RunRow,
  phase: "plan" | "apply",
  now = Date.now(),
): Promise<string | null> {
  const job = run.executionMode === "agent" ? await findJobOfRun(c.var.db, run.id, phase) : undefined;
  const endedAt = phaseEndedAt(run, phase, job);
  const settings = agentSettings(c.env);
  const limit = phase === "plan" ? settings.planJobLimitMs : settings.applyJobLimitMs;
  const until = (endedAt ?? now + limit) + LOG_AFTER_END_MS;
  if (until <= now + 1000) return null;
  const id = phase === "plan" ? run.planId : applyIdOf(run);
  return runDataLink(c.env, new URL(c.req.url).origin, "log", id, Math.floor((until - now) / 1000), now);
}

/** The most log chunks one read opens (the agent's chunks have no minimum size): a read may answer fewer bytes than asked. */
const LOG_CHUNKS_PER_READ = 64;

/**
 * The log bytes of `job` from `start`, up to `end`: fewer when the range spans more than
 * LOG_CHUNKS_PER_READ chunks (a reader asks again from where this stopped, as go-tfe does).
 */
async function logBytes(c: Context<NocodeEnv>, job: AgentJobRow, start: number, end: number): Promise<Uint8Array> {
  const out = new Uint8Array(Math.max(0, end - start));
  if (out.length === 0) return out;
  const chunks = await logChunksOverlapping(c.var.db, job.id, start, end, LOG_CHUNKS_PER_READ);
  let filled = start;
  for (const chunk of chunks) {
    // The chunks are contiguous from 0 (the append is conditional on the length); stop at anything else.
    if (chunk.offset > filled) break;
    const row = await findRunData(c.var.db, chunk.objectId);
    const bytes = row ? await readRunData(c.env, row) : null;
    if (!bytes) break;
    const to = Math.min(end, chunk.offset + chunk.length);
    out.set(bytes.subarray(filled - chunk.offset, to - chunk.offset), filled - start);
    filled = to;
    if (filled >= end) break;
  }
  return out.subarray(0, filled - start);
}

const BYTE_COUNT = /^(0|[1-9][0-9]{0,9})$/;

runDataRoutes.get(
  "/signed/logs/:id",
  rights({ caller: "public" }),
  operation({
    tag: "runs",
    summary:
      "A phase's log through its log-read-url (B23; no token): `?limit&offset` over the log framed with STX (0x02) first and ETX (0x03) once the phase is complete",
    answers: {
      200: { description: "The requested bytes of the framed log", contentType: "text/plain", schema: v.string() },
    },
    errors: [400, 404],
  }),
  async (c) => {
    const id = c.req.param("id");
    if (!(await runDataLinkValid(c.env, "log", id, c.req.query()))) return signedLinkRefused();
    const found = await phaseOfLogId(c.var.db, id);
    if (!found) return signedLinkRefused();
    const { run, phase } = found;
    const rawOffset = c.req.query("offset") ?? "0";
    const rawLimit = c.req.query("limit") ?? String(LOG_READ_MAX);
    const headers = { ...SIGNED_LINK_HEADERS, "Content-Type": "text/plain; charset=utf-8" };
    if (!BYTE_COUNT.test(rawOffset) || !BYTE_COUNT.test(rawLimit)) {
      const res = nocodeErrorResponse(badRequest("limit and offset are byte counts"));
      for (const [name, value] of Object.entries(SIGNED_LINK_HEADERS)) res.headers.set(name, value);
      return res;
    }
    const offset = Number(rawOffset);
    const limit = Math.min(Number(rawLimit), LOG_READ_MAX);
    const job = run.executionMode === "agent" ? await findJobOfRun(c.var.db, run.id, phase) : undefined;
    const complete = phaseEndedAt(run, phase, job) !== null;
    // Framed: STX, the log's bytes, then ETX once complete.
    const logLength = job?.logLength ?? 0;
    const framedLength = 1 + logLength + (complete ? 1 : 0);
    const start = Math.min(offset, framedLength);
    const end = Math.min(framedLength, start + limit);
    const head = start === 0 && end > 0 ? [STX] : [];
    const logStart = Math.max(start - 1, 0);
    const logEnd = Math.max(logStart, Math.min(end - 1, logLength));
    const log = job && logEnd > logStart ? await logBytes(c, job, logStart, logEnd) : new Uint8Array(0);
    // ETX only once the phase is complete and this read reached the log's end.
    const tail = complete && logStart + log.length === logLength && end === framedLength && end > start ? [ETX] : [];
    const out = new Uint8Array(head.length + log.length + tail.length);
    out.set(head, 0);
    out.set(log, head.length);
    out.set(tail, head.length + log.length);
    return c.body(out, 200, headers);
  },
);

const runPlanShow = operation({
  tag: "runs",
  summary: "Show a run's plan (N7; read-workspaces)",
  answers: { 200: { description: "The plan", schema: planDocumentAnswer } },
});

runDataRoutes.get("/runs/:id/plan", rights({ right: "read-workspaces" }, { scope: runById }), runPlanShow, async (c) =>
  jsonApi({ data: planResource(runById.of(c), await logReadUrl(c, runById.of(c), "plan")) }),
);

const planShow = operation({
  tag: "runs",
  summary: "Show a plan (N7; read-workspaces)",
  answers: { 200: { description: "The plan", schema: planDocumentAnswer } },
});

runDataRoutes.get("/plans/:id", rights({ right: "read-workspaces" }, { scope: runByPlanId }), planShow, async (c) =>
  jsonApi({ data: planResource(runByPlanId.of(c), await logReadUrl(c, runByPlanId.of(c), "plan")) }),
);

/** The run of the apply `:id` (`apply-<the plan id's characters>`). */
const runByApplyId = scope(async (c) => {
  const id = c.req.param("id") ?? "";
  if (!id.startsWith("apply-")) return undefined;
  const run = await findRunByPlanId(c.var.db, `plan-${id.slice("apply-".length)}`);
  return run && { resource: run, organization: run.organization };
});

const applyShow = operation({
  tag: "runs",
  summary: "Show an apply with its log-read-url (N20; read-workspaces)",
  answers: { 200: { description: "The apply", schema: applyDocumentAnswer } },
});

runDataRoutes.get("/applies/:id", rights({ right: "read-workspaces" }, { scope: runByApplyId }), applyShow, async (c) =>
  jsonApi({ data: applyResource(runByApplyId.of(c), await logReadUrl(c, runByApplyId.of(c), "apply")) }),
);

runDataRoutes.get("/runs/:id/apply", rights({ right: "read-workspaces" }, { scope: runById }), applyShow, async (c) =>
  jsonApi({ data: applyResource(runById.of(c), await logReadUrl(c, runById.of(c), "apply")) }),
);
