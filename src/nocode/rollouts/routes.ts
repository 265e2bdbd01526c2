/**
 * Routes of fleet upgrades (decision N15; beyond HCP Terraform):
 * - `POST /no-code-modules/:id/upgrade-rollouts` → 201 `upgrade-rollouts`;
 * - `GET /upgrade-rollouts/:id` → 200 with status and items;
 * - `POST /upgrade-rollouts/:id/actions/{confirm,pause,resume,cancel}` → 202, or 409 in a
 *   state where the action does not apply.
 */
import { Hono } from "hono";
import type { NocodeEnv } from "../env";
import { notFound } from "../errors";
import { findNoCodeModule } from "../no-code-modules/repo";
import { operation } from "../request/operation";
import { jsonApi } from "../respond";
import { rights, scope } from "../route-rights";
import { defaultUpgradeDeps } from "../upgrade/deps";
import { rolloutDocument, rolloutInputOf } from "./input";
import { findRollout, listRolloutItems } from "./repo";
import { rolloutDocumentAnswer, rolloutResource } from "./serialize";
import { createRollout, type RolloutAction, rolloutAction } from "./service";

/** Routes of N15, mounted under /api/v2. */
export const rolloutRoutes = new Hono<NocodeEnv>();

const ACTIONS: readonly RolloutAction[] = ["confirm", "pause", "resume", "cancel"];

const rolloutCreate = operation({
  tag: "upgrade-rollouts",
  summary: "Start a rollout of the module's pinned version over its workspaces (N15; run-workspaces)",
  description:
    "The body is optional: `data.attributes` `batch-size` (1–100, default 1), `auto-confirm` (`never`, `no-destructions`, `no-changes`), `max-failures` (default 0); `data.relationships.workspaces` lists at most 1,000 workspaces (default: every workspace of the module with an upgrade available).",
  body: rolloutDocument,
  answers: { 201: { description: "The rollout, with its items", schema: rolloutDocumentAnswer } },
  errors: [409],
});

/** The no-code module `:id` to roll out. */
const moduleById = scope(async (c) => {
  const module = await findNoCodeModule(c.var.db, c.req.param("id") ?? "");
  return module && { resource: module, organization: module.organization };
});

/** The rollout `:id`. */
const rolloutById = scope(async (c) => {
  const rollout = await findRollout(c.var.db, c.req.param("id") ?? "");
  return rollout && { resource: rollout, organization: rollout.organization };
});

rolloutRoutes.post(
  "/no-code-modules/:id/upgrade-rollouts",
  rights({ right: "run-workspaces" }, { scope: moduleById }),
  rolloutCreate,
  async (c) => {
    const db = c.var.db;
    const module = moduleById.of(c);
    const input = rolloutInputOf(await rolloutCreate.body(c));
    const rollout = await createRollout(db, c.var.caller, module, input, defaultUpgradeDeps(c.env));
    const items = await listRolloutItems(db, rollout.id);
    return jsonApi({ data: rolloutResource(rollout, items) }, 201);
  },
);

const rolloutShow = operation({
  tag: "upgrade-rollouts",
  summary: "Show a rollout with its per-workspace items (N15; run-workspaces)",
  answers: { 200: { description: "The rollout", schema: rolloutDocumentAnswer } },
});

rolloutRoutes.get(
  "/upgrade-rollouts/:id",
  rights({ right: "run-workspaces" }, { scope: rolloutById }),
  rolloutShow,
  async (c) => {
    const rollout = rolloutById.of(c);
    return jsonApi({ data: rolloutResource(rollout, await listRolloutItems(c.var.db, rollout.id)) });
  },
);

const rolloutActionOperation = operation({
  tag: "upgrade-rollouts",
  summary: "Confirm the waiting batch, pause, resume or cancel a rollout (N15; run-workspaces); another action is 404",
  answers: { 202: { description: "The rollout after the action", schema: rolloutDocumentAnswer } },
  errors: [409],
});

rolloutRoutes.post(
  "/upgrade-rollouts/:id/actions/:action",
  rights({ right: "run-workspaces" }, { scope: rolloutById }),
  rolloutActionOperation,
  async (c) => {
    const action = c.req.param("action") as RolloutAction;
    if (!ACTIONS.includes(action)) throw notFound();
    const rollout = await rolloutAction(c.var.db, rolloutById.of(c).id, action, defaultUpgradeDeps(c.env));
    const items = await listRolloutItems(c.var.db, rollout.id);
    return jsonApi({ data: rolloutResource(rollout, items) }, 202);
  },
);
