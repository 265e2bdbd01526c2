/**
 * Runs, plans and state versions (decision N7): `GET /runs/:id`,
 * `POST /runs/:id/actions/apply|discard` (202), `GET /runs/:id/plan`, `GET /plans/:id`,
 * `GET /plans/:id/json-output`, `GET /state-versions/:id` (a workspace's runs are listed by
 * ../workspaces/routes.ts).
 * Reads need `read-workspaces`; run actions `manage-workspaces`, and the organization
 * token may not act (N10). Not permitted → 404.
 */
import { Hono } from "hono";
import type { NocodeEnv } from "../env";
import { conflict } from "../errors";
import type { OrgPermission } from "../permissions";
import { operation } from "../request/operation";
import { jsonApi } from "../respond";
import { notifyRolloutOfRun } from "../rollout-hooks";
import { rights, scope } from "../route-rights";
import { confirmRun, discardRun } from "./create";
import { findRun, findRunByPlanId, findStateVersionWithOrganization, type RunRow } from "./repo";
import {
  planDocumentAnswer,
  planJsonOutput,
  planJsonOutputAnswer,
  planOf,
  planResource,
  runDocumentAnswer,
  runResource,
  stateVersionDocumentAnswer,
  stateVersionResource,
} from "./serialize";

/** The run `:id` (its organization's rights decide). */
const runById = scope(async (c) => {
  const run = await findRun(c.var.db, c.req.param("id") ?? "");
  return run && { resource: run, organization: run.organization };
});

/** The run of the plan `:id`. */
const runByPlanId = scope(async (c) => {
  const run = await findRunByPlanId(c.var.db, c.req.param("id") ?? "");
  return run && { resource: run, organization: run.organization };
});

/** The state version `:id`, with its workspace's organization. */
const stateVersionById = scope(async (c) => {
  const sv = await findStateVersionWithOrganization(c.var.db, c.req.param("id") ?? "");
  return sv && { resource: sv, organization: sv.organization };
});

/** A run with the caller's rights in its organization (`permissions.can-apply`, …). */
function renderRun(run: RunRow, rights: ReadonlySet<OrgPermission>) {
  return runResource(run, { canAct: rights.has("run-workspaces") });
}

/** Routes of runs and plans. */
export const runRoutes = new Hono<NocodeEnv>();

const runShow = operation({
  tag: "runs",
  summary: "Show a run (N7; read-workspaces)",
  answers: { 200: { description: "The run", schema: runDocumentAnswer } },
});

runRoutes.get("/runs/:id", rights({ right: "read-workspaces" }, { scope: runById }), runShow, async (c) =>
  jsonApi({ data: renderRun(runById.of(c), c.var.orgRights) }),
);

const runPlanShow = operation({
  tag: "runs",
  summary: "Show a run's plan (N7; read-workspaces)",
  answers: { 200: { description: "The plan", schema: planDocumentAnswer } },
});

runRoutes.get("/runs/:id/plan", rights({ right: "read-workspaces" }, { scope: runById }), runPlanShow, async (c) =>
  jsonApi({ data: planResource(runById.of(c)) }),
);

const planShow = operation({
  tag: "runs",
  summary: "Show a plan (N7; read-workspaces)",
  answers: { 200: { description: "The plan", schema: planDocumentAnswer } },
});

runRoutes.get("/plans/:id", rights({ right: "read-workspaces" }, { scope: runByPlanId }), planShow, async (c) =>
  jsonApi({ data: planResource(runByPlanId.of(c)) }),
);

const planJsonOutputShow = operation({
  tag: "runs",
  summary: "A finished plan in Terraform's JSON plan format (N7; read-workspaces); 409 before the plan finished",
  answers: {
    200: { description: "The plan's JSON output", schema: planJsonOutputAnswer, contentType: "application/json" },
  },
  errors: [409],
});

runRoutes.get(
  "/plans/:id/json-output",
  rights({ right: "read-workspaces" }, { scope: runByPlanId }),
  planJsonOutputShow,
  async (c) => {
    const run = runByPlanId.of(c);
    const plan = planOf(run);
    if (!plan) throw conflict("The plan has not finished yet; its JSON output is not available");
    return c.json(planJsonOutput(run, plan));
  },
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

// N7 run action: discard a run waiting at `planned`.
runRoutes.post(
  "/runs/:id/actions/discard",
  rights({ right: "run-workspaces" }, { cache: "unchanged", scope: runById }),
  operation({
    tag: "runs",
    summary: "Discard a run waiting at planned (N7)",
    answers: { 202: { description: "Discarded" } },
    errors: [409],
  }),
  async (c) => {
    const db = c.var.db;
    const run = runById.of(c);
    if (!(await discardRun(db, run.id))) throw conflict(`The run is ${run.status}, not awaiting confirmation`);
    // N15: a rollout's plan discarded by hand — the rollout's next step skips that workspace.
    await notifyRolloutOfRun(db, run.id, async (message) => {
      await c.env.PROVISION_QUEUE.send(message, { contentType: "json" });
    });
    return c.body(null, 202);
  },
);

const stateVersionShow = operation({
  tag: "runs",
  summary: "Show a state version: resource addresses and outputs, values null (N7; read-workspaces)",
  answers: { 200: { description: "The state version", schema: stateVersionDocumentAnswer } },
});

runRoutes.get(
  "/state-versions/:id",
  rights({ right: "read-workspaces" }, { scope: stateVersionById }),
  stateVersionShow,
  async (c) => jsonApi({ data: stateVersionResource(stateVersionById.of(c)) }),
);
