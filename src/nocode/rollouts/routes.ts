/**
 * Routes of fleet upgrades (decision N15; beyond HCP Terraform):
 * - `POST /no-code-modules/:id/upgrade-rollouts` → 201 `upgrade-rollouts`;
 * - `GET /upgrade-rollouts/:id` → 200 with status and items;
 * - `POST /upgrade-rollouts/:id/actions/{confirm,pause,resume,cancel}` → 202, or 409 in a
 *   state where the action does not apply.
 */
import { Hono } from "hono";
import { createDb } from "../../db/client";
import type { NocodeEnv } from "../env";
import { notFound } from "../errors";
import { jsonApi } from "../respond";
import { rights } from "../route-rights";
import { defaultUpgradeDeps } from "../upgrade/service";
import { listRolloutItems } from "./repo";
import { rolloutResource } from "./serialize";
import { createRollout, type RolloutAction, readRollout, rolloutAction } from "./service";

/** Routes of N15, mounted under /api/v2. */
export const rolloutRoutes = new Hono<NocodeEnv>();

const ACTIONS: readonly RolloutAction[] = ["confirm", "pause", "resume", "cancel"];

rolloutRoutes.post("/no-code-modules/:id/upgrade-rollouts", rights({ right: "run-workspaces" }), async (c) => {
  const rollout = await createRollout(c.env, c.var.caller, c.req.param("id"), c.req.raw, defaultUpgradeDeps(c.env));
  const items = await listRolloutItems(createDb(c.env.DB), rollout.id);
  return jsonApi({ data: rolloutResource(rollout, items) }, 201);
});

rolloutRoutes.get("/upgrade-rollouts/:id", rights({ right: "run-workspaces" }), async (c) => {
  const { rollout, items } = await readRollout(c.env, c.var.caller, c.req.param("id"));
  return jsonApi({ data: rolloutResource(rollout, items) });
});

rolloutRoutes.post("/upgrade-rollouts/:id/actions/:action", rights({ right: "run-workspaces" }), async (c) => {
  const action = c.req.param("action") as RolloutAction;
  if (!ACTIONS.includes(action)) throw notFound();
  const rollout = await rolloutAction(c.env, c.var.caller, c.req.param("id"), action, defaultUpgradeDeps(c.env));
  const items = await listRolloutItems(createDb(c.env.DB), rollout.id);
  return jsonApi({ data: rolloutResource(rollout, items) }, 202);
});
