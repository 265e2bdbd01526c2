/**
 * Runs, plans and state versions (decision N7): `GET /runs/:id`,
 * `POST /runs/:id/actions/apply|discard` (202), `GET /runs/:id/plan`, `GET /plans/:id`,
 * `GET /plans/:id/json-output`, `GET /state-versions/:id` (a workspace's runs are listed by
 * ../workspaces/routes.ts).
 * Reads need `read-workspaces`; run actions `manage-workspaces`, and the organization
 * token may not act (N10). Not permitted → 404.
 */
import { Hono } from "hono";
import type { Db } from "../../db/client";
import type { NocodeCaller } from "../auth";
import type { NocodeEnv } from "../env";
import { conflict, notFound } from "../errors";
import { hasOrgPermission, requireOrgPermission } from "../permissions";
import { operation } from "../request/operation";
import { jsonApi } from "../respond";
import { notifyRolloutOfRun } from "../rollout-hooks";
import { rights } from "../route-rights";
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

/** A run the caller may read (read-workspaces); 404 otherwise. */
async function readableRun(db: Db, caller: NocodeCaller, run: RunRow | undefined): Promise<RunRow> {
  if (!run) throw notFound();
  await requireOrgPermission(db, caller, run.organization, "read-workspaces");
  return run;
}

/** Render a run with the caller's rights. */
export async function renderRun(db: Db, caller: NocodeCaller, run: RunRow) {
  const canAct = await hasOrgPermission(db, caller, run.organization, "run-workspaces");
  return runResource(run, { canAct });
}

/** A run the caller may act on (manage-workspaces, no organization token); 404 otherwise. */
async function actionableRun(db: Db, caller: NocodeCaller, id: string): Promise<RunRow> {
  const run = await findRun(db, id);
  if (!run) throw notFound();
  await requireOrgPermission(db, caller, run.organization, "run-workspaces");
  return run;
}

/** Routes of runs and plans. */
export const runRoutes = new Hono<NocodeEnv>();

const runShow = operation({
  tag: "runs",
  summary: "Show a run (N7; read-workspaces)",
  answers: { 200: { description: "The run", schema: runDocumentAnswer } },
});

runRoutes.get("/runs/:id", rights({ right: "read-workspaces" }), runShow, async (c) => {
  const db = c.var.db;
  const run = await readableRun(db, c.var.caller, await findRun(db, c.req.param("id")));
  return jsonApi({ data: await renderRun(db, c.var.caller, run) });
});

const runPlanShow = operation({
  tag: "runs",
  summary: "Show a run's plan (N7; read-workspaces)",
  answers: { 200: { description: "The plan", schema: planDocumentAnswer } },
});

runRoutes.get("/runs/:id/plan", rights({ right: "read-workspaces" }), runPlanShow, async (c) => {
  const db = c.var.db;
  const run = await readableRun(db, c.var.caller, await findRun(db, c.req.param("id")));
  return jsonApi({ data: planResource(run) });
});

const planShow = operation({
  tag: "runs",
  summary: "Show a plan (N7; read-workspaces)",
  answers: { 200: { description: "The plan", schema: planDocumentAnswer } },
});

runRoutes.get("/plans/:id", rights({ right: "read-workspaces" }), planShow, async (c) => {
  const db = c.var.db;
  const run = await readableRun(db, c.var.caller, await findRunByPlanId(db, c.req.param("id")));
  return jsonApi({ data: planResource(run) });
});

const planJsonOutputShow = operation({
  tag: "runs",
  summary: "A finished plan in Terraform's JSON plan format (N7; read-workspaces); 409 before the plan finished",
  answers: {
    200: { description: "The plan's JSON output", schema: planJsonOutputAnswer, contentType: "application/json" },
  },
  errors: [409],
});

runRoutes.get("/plans/:id/json-output", rights({ right: "read-workspaces" }), planJsonOutputShow, async (c) => {
  const db = c.var.db;
  const run = await readableRun(db, c.var.caller, await findRunByPlanId(db, c.req.param("id")));
  const plan = planOf(run);
  if (!plan) throw conflict("The plan has not finished yet; its JSON output is not available");
  return c.json(planJsonOutput(run, plan));
});

// N7 run action: confirm a run waiting at `planned` and queue its apply.
runRoutes.post(
  "/runs/:id/actions/apply",
  rights({ right: "run-workspaces" }, { cache: "unchanged" }),
  operation({
    tag: "runs",
    summary: "Confirm a run waiting at planned and queue its apply (N7; an upgrade run is confirmed by E7 instead)",
    answers: { 202: { description: "Confirmed; the apply is queued" } },
    errors: [409],
  }),
  async (c) => {
    const db = c.var.db;
    const run = await actionableRun(db, c.var.caller, c.req.param("id"));
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
  rights({ right: "run-workspaces" }, { cache: "unchanged" }),
  operation({
    tag: "runs",
    summary: "Discard a run waiting at planned (N7)",
    answers: { 202: { description: "Discarded" } },
    errors: [409],
  }),
  async (c) => {
    const db = c.var.db;
    const run = await actionableRun(db, c.var.caller, c.req.param("id"));
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

runRoutes.get("/state-versions/:id", rights({ right: "read-workspaces" }), stateVersionShow, async (c) => {
  const db = c.var.db;
  const sv = await findStateVersionWithOrganization(db, c.req.param("id"));
  if (!sv) throw notFound();
  await requireOrgPermission(db, c.var.caller, sv.organization, "read-workspaces");
  return jsonApi({ data: stateVersionResource(sv) });
});
