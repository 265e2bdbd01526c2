/**
 * Routes of the workspace upgrade (seed E5–E7; decisions N2, N8, N10), all 200 on
 * success (N2):
 * - `POST /no-code-modules/:id/workspaces/:workspace_id/upgrade` (E5) → `workspace-upgrade`
 *   with `status` and `plan-url`, or with only `message` when there is nothing to upgrade;
 * - `GET …/upgrade/:run_id` (E6) → `workspace-upgrade` with the run's current status
 *   (N19: a run queued for an agent reads `pending`, see serialize.ts);
 * - `POST …/upgrade/:run_id` (E7) → the plain text `Workspace update completed`.
 *
 * Permissions (N10): E5 and E7 need `run-workspaces` (manage-workspaces), E6
 * `read-upgrades` (read-workspaces); all three refuse the organization token. Everything
 * not permitted or not found is 404, checked before the body is read.
 */
import { Hono } from "hono";
import * as v from "valibot";
import type { NocodeEnv } from "../env";
import { operation } from "../request/operation";
import { jsonApi } from "../respond";
import { rights } from "../route-rights";
import { confirmUpgrade } from "./confirm";
import { defaultUpgradeDeps } from "./deps";
import { initiateUpgrade } from "./initiate";
import { upgradeDocument, upgradeInputOf } from "./input";
import {
  noUpgradeAnswer,
  noUpgradeResource,
  planUrl,
  WORKSPACE_UPDATE_COMPLETED,
  workspaceUpgradeAnswer,
  workspaceUpgradeResource,
} from "./serialize";
import { upgradeRunOf, upgradeTargetOfPath } from "./target";

/** Routes of E5–E7, mounted under /api/v2. */
export const upgradeRoutes = new Hono<NocodeEnv>();

const BASE = "/no-code-modules/:id/workspaces/:workspace_id/upgrade";

// E5
const initiate = operation({
  tag: "workspace-upgrades",
  summary: "E5: plan an upgrade of a no-code workspace to the module's pin (N8)",
  body: upgradeDocument,
  answers: {
    200: {
      description:
        "The upgrade run: planned and waiting for E7 (remote workspace), or `pending` until an agent of the workspace's pool has planned it (agent workspace, N19); or only a `message` when there is nothing to upgrade",
      schema: v.union([workspaceUpgradeAnswer, noUpgradeAnswer]),
    },
  },
  errors: [409, 422],
});

upgradeRoutes.post(
  BASE,
  rights({ right: "run-workspaces" }, { cache: "unchanged", scope: upgradeTargetOfPath }),
  initiate,
  async (c) => {
    const db = c.var.db;
    const { module, workspace } = upgradeTargetOfPath.of(c);
    const input = upgradeInputOf(await initiate.body(c));
    const result = await initiateUpgrade(c.env, db, module, workspace, input);
    if (result.kind === "no-upgrade") return jsonApi({ data: noUpgradeResource(result.workspace.id, result.message) });
    const url = await planUrl(c.env, new URL(c.req.url).origin, result.workspace, result.run.id);
    return jsonApi({ data: workspaceUpgradeResource(result.run, result.workspace.id, url) });
  },
);

// E6
const status = operation({
  tag: "workspace-upgrades",
  summary: "E6: an upgrade run's current status, with a fresh plan-url (N8)",
  answers: { 200: { description: "The upgrade run", schema: workspaceUpgradeAnswer } },
});

upgradeRoutes.get(
  `${BASE}/:run_id`,
  rights({ right: "read-upgrades" }, { scope: upgradeTargetOfPath }),
  status,
  async (c) => {
    const target = upgradeTargetOfPath.of(c);
    const workspace = target.workspace;
    const run = await upgradeRunOf(c.var.db, target, c.req.param("run_id"));
    const url = await planUrl(c.env, new URL(c.req.url).origin, workspace, run.id);
    return jsonApi({ data: workspaceUpgradeResource(run, workspace.id, url) });
  },
);

// E7
const confirm = operation({
  tag: "workspace-upgrades",
  summary: "E7: confirm a planned, fresh upgrade run; the workspace switches and the apply is queued (N8)",
  answers: { 200: { description: "Done", contentType: "text/plain", schema: v.literal(WORKSPACE_UPDATE_COMPLETED) } },
  errors: [409],
});

upgradeRoutes.post(
  `${BASE}/:run_id`,
  rights({ right: "run-workspaces" }, { cache: "unchanged", scope: upgradeTargetOfPath }),
  confirm,
  async (c) => {
    await confirmUpgrade(
      c.var.db,
      c.req.param("id"),
      c.req.param("workspace_id"),
      c.req.param("run_id"),
      defaultUpgradeDeps(c.env),
    );
    return c.text(WORKSPACE_UPDATE_COMPLETED, 200);
  },
);
