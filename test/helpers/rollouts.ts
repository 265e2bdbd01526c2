/**
 * Driving fleet upgrades (decision N15) in the worker tests: start a rollout of a no-code
 * module through /api/v2 or through its service with the queue messages kept (delivered by
 * hand where the order matters), read it, wait for it, act on it, and read the upgrade runs
 * of a workspace straight from D1.
 */
import { env } from "cloudflare:workers";
import { vi } from "vitest";
import { createDb } from "../../src/db/client";
import { authenticateNocode } from "../../src/nocode/access/auth";
import type { ProvisionMessage } from "../../src/nocode/messages/provision";
import { readRolloutDocument } from "../../src/nocode/rollouts/input";
import { createRollout, rolloutModule } from "../../src/nocode/rollouts/service";
import { type TfeAnswer, tfe } from "./nocode";

// biome-ignore lint/suspicious/noExplicitAny: JSON
type Json = any;

/** The module a test's rollouts upgrade and the token of one of its owners. */
interface RolloutTarget {
  noCodeModuleId: string;
  ownerToken: string;
}

/** The JSON:API document that starts a rollout of `workspaceIds` (all the module's when absent). */
export function rolloutDocument(attributes: Record<string, unknown> = {}, workspaceIds?: string[]) {
  const relationships = workspaceIds
    ? { workspaces: { data: workspaceIds.map((id) => ({ type: "workspaces", id })) } }
    : undefined;
  return { data: { type: "upgrade-rollouts", attributes, relationships } };
}

/** The items' statuses, in order. */
export const itemStatuses = (rollout: Json): string[] =>
  rollout.attributes.items.map((i: { status: string }) => i.status);

/** Every item ended. */
export const itemsDone = (rollout: Json): boolean =>
  itemStatuses(rollout).every((status) => ["applied", "skipped", "errored", "canceled"].includes(status));

/**
 * The rollout calls of one module, as its owner unless another token is given. `target` is
 * read at each call, so it may be a module a `beforeAll` creates.
 */
export function rolloutDriver(target: () => RolloutTarget) {
  /** POST /no-code-modules/:id/upgrade-rollouts; the answer as it is. */
  function startRollout(
    attributes: Record<string, unknown>,
    workspaceIds?: string[],
    token = target().ownerToken,
  ): Promise<TfeAnswer> {
    return tfe("POST", `no-code-modules/${target().noCodeModuleId}/upgrade-rollouts`, {
      token,
      body: rolloutDocument(attributes, workspaceIds),
    });
  }

  /** The rollout resource (`data`); fails unless it reads. */
  async function readRollout(id: string): Promise<Json> {
    const res = await tfe("GET", `upgrade-rollouts/${id}`, { token: target().ownerToken });
    if (res.status !== 200) throw new Error(`rollout ${id}: ${res.status} ${res.text}`);
    return res.json.data;
  }

  /** Start a rollout as {@link startRollout} does; fails unless it was created; answers its id. */
  async function newRollout(attributes: Record<string, unknown>, workspaceIds?: string[]): Promise<string> {
    const res = await startRollout(attributes, workspaceIds);
    if (res.status !== 201) throw new Error(`rollout not started: ${res.status} ${res.text}`);
    return res.json.data.id as string;
  }

  /** Poll until `check` holds of the rollout; answers it. */
  function waitRolloutUntil(id: string, check: (rollout: Json) => boolean): Promise<Json> {
    return vi.waitFor(
      async () => {
        const rollout = await readRollout(id);
        if (!check(rollout))
          throw new Error(`rollout ${id} is ${rollout.attributes.status}: ${JSON.stringify(rollout.attributes.items)}`);
        return rollout;
      },
      { timeout: 60_000, interval: 100 },
    );
  }

  /** Poll until the rollout is in one of `statuses` and `also` holds of it; answers it. */
  function waitRollout(id: string, statuses: string[], also: (rollout: Json) => boolean = () => true): Promise<Json> {
    return waitRolloutUntil(id, (rollout) => statuses.includes(rollout.attributes.status) && also(rollout));
  }

  /** POST /upgrade-rollouts/:id/actions/:name (confirm, pause, resume, cancel). */
  function action(id: string, name: string, token = target().ownerToken): Promise<TfeAnswer> {
    return tfe("POST", `upgrade-rollouts/${id}/actions/${name}`, { token });
  }

  /**
   * A rollout created through the service as the route creates it (module and caller checked,
   * document read), its queue messages kept instead of sent: `step` is its first step.
   */
  async function startKeptRollout(workspaceIds: string[], attributes: Record<string, unknown> = {}) {
    const caller = await authenticateNocode(env, new Headers({ Authorization: `Bearer ${target().ownerToken}` }));
    if (!caller) throw new Error("the owner token did not authenticate");
    const kept: ProvisionMessage[] = [];
    const db = createDb(env.DB);
    const module = await rolloutModule(db, target().noCodeModuleId);
    const rollout = await createRollout(
      db,
      caller,
      module,
      readRolloutDocument(rolloutDocument(attributes, workspaceIds)),
      {
        now: Date.now,
        send: async (message) => void kept.push(message),
      },
    );
    return { id: rollout.id, step: kept[0]!, caller };
  }

  return { startRollout, newRollout, readRollout, waitRollout, waitRolloutUntil, action, startKeptRollout };
}

/** The upgrade runs of a workspace, oldest first, as D1 holds them. */
export async function upgradeRunsOf(workspaceId: string): Promise<{ id: string; status: string }[]> {
  return (
    await env.DB.prepare("SELECT id, status FROM runs WHERE workspace_id = ? AND kind = 'upgrade' ORDER BY created_at")
      .bind(workspaceId)
      .all<{ id: string; status: string }>()
  ).results;
}
