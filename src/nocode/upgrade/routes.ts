/**
 * Routes of the workspace upgrade (seed E5–E7; decisions N2, N8, N10), all 200 on
 * success (N2):
 * - `POST /no-code-modules/:id/workspaces/:workspace_id/upgrade` (E5) → `workspace-upgrade`
 *   with `status` and `plan-url`, or with only `message` when there is nothing to upgrade;
 * - `GET …/upgrade/:run_id` (E6) → `workspace-upgrade` with the run's current status;
 * - `POST …/upgrade/:run_id` (E7) → the plain text `Workspace update completed`.
 */
import { Hono } from "hono";
import type { NocodeEnv } from "../env";
import { jsonApi } from "../respond";
import { rights } from "../route-rights";
import { confirmUpgrade, defaultUpgradeDeps, findUpgradeRun, initiateUpgrade } from "./service";
import { noUpgradeResource, planUrl, WORKSPACE_UPDATE_COMPLETED, workspaceUpgradeResource } from "./serialize";

/** Routes of E5–E7, mounted under /api/v2. */
export const upgradeRoutes = new Hono<NocodeEnv>();

const BASE = "/no-code-modules/:id/workspaces/:workspace_id/upgrade";

// E5
upgradeRoutes.post(BASE, rights({ right: "run-workspaces" }), async (c) => {
  const result = await initiateUpgrade(c.env, c.var.caller, c.req.param("id"), c.req.param("workspace_id"), c.req.raw);
  if (result.kind === "no-upgrade") return jsonApi({ data: noUpgradeResource(result.workspace.id, result.message) });
  const url = await planUrl(c.env, new URL(c.req.url).origin, result.workspace, result.run.id);
  return jsonApi({ data: workspaceUpgradeResource(result.run, result.workspace.id, url) });
});

// E6
upgradeRoutes.get(`${BASE}/:run_id`, rights({ right: "read-upgrades" }), async (c) => {
  const { workspace, run } = await findUpgradeRun(c.env, c.var.caller, c.req.param("id"), c.req.param("workspace_id"), c.req.param("run_id"));
  const url = await planUrl(c.env, new URL(c.req.url).origin, workspace, run.id);
  return jsonApi({ data: workspaceUpgradeResource(run, workspace.id, url) });
});

// E7
upgradeRoutes.post(`${BASE}/:run_id`, rights({ right: "run-workspaces" }), async (c) => {
  await confirmUpgrade(c.env, c.var.caller, c.req.param("id"), c.req.param("workspace_id"), c.req.param("run_id"), defaultUpgradeDeps(c.env));
  return c.text(WORKSPACE_UPDATE_COMPLETED, 200);
});
