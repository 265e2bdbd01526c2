/**
 * Runs, plans and state versions (decision N7): `GET /runs/:id`,
 * `POST /runs/:id/actions/apply|discard` (202), `GET /runs/:id/plan`, `GET /plans/:id`,
 * `GET /plans/:id/json-output`, `GET /workspaces/:id/runs`, `GET /state-versions/:id`.
 * Reads need `read-workspaces`; run actions `manage-workspaces`, and the organization
 * token may not act (N10). Not permitted → 404.
 */
import { count, desc, eq } from "drizzle-orm";
import { Hono } from "hono";
import { createDb, type Db } from "../../db/client";
import { runs } from "../../db/schema";
import type { NocodeEnv } from "../env";
import type { NocodeCaller } from "../auth";
import { conflict, notFound } from "../errors";
import { pageDocument, pageRequest } from "../jsonapi";
import { hasOrgPermission, requireOrgPermission } from "../permissions";
import { jsonApi } from "../respond";
import { findWorkspace } from "../workspaces/repo";
import { confirmRun, discardRun } from "./create";
import { findRun, findRunByPlanId, findStateVersion, type RunRow } from "./repo";
import { planJsonOutput, planOf, planResource, runResource, stateVersionResource } from "./serialize";
import { rights } from "../route-rights";
import { sendProvisionMessage } from "../queue/messages";
import { notifyRolloutOfRun } from "../rollouts/repo";

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

runRoutes.get("/runs/:id", rights({ right: "read-workspaces" }), async (c) => {
  const db = createDb(c.env.DB);
  const run = await readableRun(db, c.var.caller, await findRun(db, c.req.param("id")));
  return jsonApi({ data: await renderRun(db, c.var.caller, run) });
});

runRoutes.get("/runs/:id/plan", rights({ right: "read-workspaces" }), async (c) => {
  const db = createDb(c.env.DB);
  const run = await readableRun(db, c.var.caller, await findRun(db, c.req.param("id")));
  return jsonApi({ data: planResource(run) });
});

runRoutes.get("/plans/:id", rights({ right: "read-workspaces" }), async (c) => {
  const db = createDb(c.env.DB);
  const run = await readableRun(db, c.var.caller, await findRunByPlanId(db, c.req.param("id")));
  return jsonApi({ data: planResource(run) });
});

runRoutes.get("/plans/:id/json-output", rights({ right: "read-workspaces" }), async (c) => {
  const db = createDb(c.env.DB);
  const run = await readableRun(db, c.var.caller, await findRunByPlanId(db, c.req.param("id")));
  const plan = planOf(run);
  if (!plan) throw conflict("The plan has not finished yet; its JSON output is not available");
  return c.json(planJsonOutput(run, plan));
});

// N7 run action: confirm a run waiting at `planned` and queue its apply.
runRoutes.post("/runs/:id/actions/apply", rights({ right: "run-workspaces" }), async (c) => {
  const db = createDb(c.env.DB);
  const run = await actionableRun(db, c.var.caller, c.req.param("id"));
  if (run.kind === "upgrade") {
    // N8: an upgrade run is confirmed by E7, which also switches the workspace's version.
    throw conflict("This is a no-code upgrade run: confirm it through the workspace upgrade endpoint");
  }
  if (!(await confirmRun(c.env, db, run.id))) throw conflict(`The run is ${run.status}, not awaiting confirmation`);
  return c.body(null, 202);
});

// N7 run action: discard a run waiting at `planned`.
runRoutes.post("/runs/:id/actions/discard", rights({ right: "run-workspaces" }), async (c) => {
  const db = createDb(c.env.DB);
  const run = await actionableRun(db, c.var.caller, c.req.param("id"));
  if (!(await discardRun(db, run.id))) throw conflict(`The run is ${run.status}, not awaiting confirmation`);
  // N15: a rollout's plan discarded by hand — the rollout's next step skips that workspace.
  await notifyRolloutOfRun(db, run.id, (message) => sendProvisionMessage(c.env, message));
  return c.body(null, 202);
});

runRoutes.get("/workspaces/:id/runs", rights({ right: "read-workspaces" }), async (c) => {
  const db = createDb(c.env.DB);
  const workspace = await findWorkspace(db, c.req.param("id"));
  if (!workspace) throw notFound();
  await requireOrgPermission(db, c.var.caller, workspace.organization, "read-workspaces");
  const url = new URL(c.req.url);
  const page = pageRequest(url);
  const where = eq(runs.workspaceId, workspace.id);
  const [rows, totals] = await db.batch([
    db.select().from(runs).where(where).orderBy(desc(runs.createdAt), desc(runs.id)).limit(page.size).offset(page.offset),
    db.select({ n: count() }).from(runs).where(where),
  ]);
  const canAct = await hasOrgPermission(db, c.var.caller, workspace.organization, "run-workspaces");
  return jsonApi({ data: rows.map((r) => runResource(r, { canAct })), ...pageDocument(url, page, totals[0]?.n ?? 0) });
});

runRoutes.get("/state-versions/:id", rights({ right: "read-workspaces" }), async (c) => {
  const db = createDb(c.env.DB);
  const sv = await findStateVersion(db, c.req.param("id"));
  const workspace = sv ? await findWorkspace(db, sv.workspaceId) : undefined;
  if (!sv || !workspace) throw notFound();
  await requireOrgPermission(db, c.var.caller, workspace.organization, "read-workspaces");
  return jsonApi({ data: stateVersionResource(sv) });
});
