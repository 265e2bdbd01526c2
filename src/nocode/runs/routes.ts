/**
 * Runs and plans (decision N7): `GET /runs/:id`, `POST /runs/:id/actions/apply|discard`
 * (202; N19a: discarding a run not yet planned cancels it), and N19a's `POST
 * /runs/:id/actions/cancel|force-cancel` (202; ./cancel.ts) (a workspace's runs are listed by ../workspaces/routes.ts; plans, json-output and
 * logs by ../run-data/routes.ts, state versions by ../state-versions/routes.ts).
 * Reads need `read-workspaces`; run actions `manage-workspaces`, and the organization
 * token may not act (N10). Not permitted → 404.
 */
import { type Context, Hono } from "hono";
import type { OrgPermission } from "../access/permissions";
import type { NocodeEnv } from "../env";
import { conflict } from "../errors";
import { operation } from "../request/operation";
import { jsonApi } from "../respond";
import { notifyRolloutOfRun } from "../rollout-hooks";
import { rights, scope } from "../route-rights";
import { type CancelEnv, type CancelOutcome, cancelRun, forceCancelAfterMs, forceCancelRun } from "./cancel";
import { confirmRun } from "./create";
import { discardOrCancelRun } from "./discard";
import { findRun, type RunRow } from "./repo";
import { runDocumentAnswer, runResource } from "./serialize";

/** The run `:id` (its organization's rights decide). */
const runById = scope(async (c) => {
  const run = await findRun(c.var.db, c.req.param("id") ?? "");
  return run && { resource: run, organization: run.organization };
});

/** A run with the caller's rights in its organization (`permissions.can-apply`, …). */
function renderRun(run: RunRow, rights: ReadonlySet<OrgPermission>, env: CancelEnv) {
  return runResource(run, { canAct: rights.has("run-workspaces"), forceCancelAfterMs: forceCancelAfterMs(env) });
}

/** Routes of runs and plans. */
export const runRoutes = new Hono<NocodeEnv>();

const runShow = operation({
  tag: "runs",
  summary: "Show a run (N7; read-workspaces)",
  answers: { 200: { description: "The run", schema: runDocumentAnswer } },
});

runRoutes.get("/runs/:id", rights({ right: "read-workspaces" }, { scope: runById }), runShow, async (c) =>
  jsonApi({ data: renderRun(runById.of(c), c.var.orgRights, c.env) }),
);

// N7 run action: confirm a run waiting at `planned` and queue its apply.
runRoutes.post(
  "/runs/:id/actions/apply",
  rights({ right: "run-workspaces" }, { cache: "unchanged", scope: runById }),
  operation({
    tag: "runs",
    summary: "Confirm a run waiting at planned and queue its apply (N7; an upgrade run is confirmed by E7 instead)",
    answers: { 202: { description: "Confirmed; the apply is queued" } },
    errors: [409],
  }),
  async (c) => {
    const db = c.var.db;
    const run = runById.of(c);
    if (run.kind === "upgrade") {
      // N8: an upgrade run is confirmed by E7, which also switches the workspace's version.
      throw conflict("This is a no-code upgrade run: confirm it through the workspace upgrade endpoint");
    }
    if (!(await confirmRun(c.env, db, run.id))) throw conflict(`The run is ${run.status}, not awaiting confirmation`);
    return c.body(null, 202);
  },
);

// N7 run action: discard a run waiting at `planned`; N19a: a run still queued is canceled instead.
runRoutes.post(
  "/runs/:id/actions/discard",
  rights({ right: "run-workspaces" }, { cache: "unchanged", scope: runById }),
  operation({
    tag: "runs",
    summary: "Discard a run waiting at planned (N7); a run still pending or plan_queued is canceled (N19a)",
    answers: { 202: { description: "Discarded" } },
    errors: [409],
  }),
  async (c) => {
    const db = c.var.db;
    const run = runById.of(c);
    if (!(await discardOrCancelRun(db, run.id, Date.now(), c.env)))
      throw conflict(`The run is ${run.status}: only a planned run can be discarded, or a queued one canceled`);
    // N15: a rollout's plan discarded by hand — the rollout's next step skips that workspace.
    await tellRollout(c, run.id);
    return c.body(null, 202);
  },
);

// N19a run action: cancel a run not yet finished (a running agent job is interrupted by its agent).
runRoutes.post(
  "/runs/:id/actions/cancel",
  rights({ right: "run-workspaces" }, { cache: "unchanged", scope: runById }),
  operation({
    tag: "runs",
    summary:
      "Cancel a run that is pending, plan_queued, planning, apply_queued or applying (N19a; manage-workspaces): a waiting run is canceled at once, a running job is interrupted by its agent",
    answers: { 202: { description: "Canceled, or the cancel was signalled to the agent running the job" } },
    errors: [409],
  }),
  async (c) => cancelAnswer(c, runById.of(c).id, await cancelRun(c.env, c.var.db, runById.of(c).id)),
);

// N19a run action: force-cancel a run whose cancel the agent has not completed.
runRoutes.post(
  "/runs/:id/actions/force-cancel",
  rights({ right: "run-workspaces" }, { cache: "unchanged", scope: runById }),
  operation({
    tag: "runs",
    summary:
      "Force-cancel a running run at least 60 s (KEYWAY_FORCE_CANCEL_AFTER_SECONDS) after its cancel (N19a; manage-workspaces): canceled at once, the lock released, the agent kills its engine",
    answers: { 202: { description: "Canceled" } },
    errors: [409],
  }),
  async (c) => cancelAnswer(c, runById.of(c).id, await forceCancelRun(c.env, c.var.db, runById.of(c).id)),
);

/**
 * The answer to a cancel or force-cancel: 409 when refused, else 202; a run that ended
 * (a force-cancel always ends it) lets its rollout go on (N15).
 */
async function cancelAnswer(c: Context<NocodeEnv>, runId: string, outcome: CancelOutcome): Promise<Response> {
  if (outcome.kind === "refused") throw conflict(outcome.detail);
  if (outcome.kind === "canceled") await tellRollout(c, runId);
  return c.body(null, 202);
}

/** N15: a rollout's run ended by hand — the rollout's next step goes on without it. */
async function tellRollout(c: Context<NocodeEnv>, runId: string): Promise<void> {
  await notifyRolloutOfRun(c.var.db, runId, async (message) => {
    await c.env.PROVISION_QUEUE.send(message, { contentType: "json" });
  });
}
