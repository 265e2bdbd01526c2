/**
 * Fleet upgrades (decision N15): a rollout and anything else that upgrades or
 * runs the same workspace. N15: "a manual E5 on a workspace in a rollout is refused (409)
 * until its item ends"; "a workspace changed by someone else mid-rollout (vars or a run)
 * is skipped with a reason, never overwritten". Each test checks that exactly one upgrade
 * of the workspace applies, whichever side started first. Through HTTP, the real D1 and
 * the real Queue; steps and applies are delivered by hand where the order matters.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { createDb } from "../../../../src/db/client";
import type { ProvisionMessage } from "../../../../src/nocode/messages/provision";
import { findNoCodeModule } from "../../../../src/nocode/no-code-modules/repo";
import { rolloutAction } from "../../../../src/nocode/rollouts/service";
import { planUpgrade } from "../../../../src/nocode/upgrade/initiate";
import { findWorkspace } from "../../../../src/nocode/workspaces/repo";
import { createQueueHandler, defaultQueueDeps, PROVISION_QUEUE_NAME } from "../../../../src/queue";
import { tfe } from "../../../helpers/nocode";
import { deliverBatch } from "../../../helpers/queue";
import { itemStatuses, rolloutDriver, upgradeRunsOf } from "../../../helpers/rollouts";
import { e5, e7, UPGRADE_TEST_TIMEOUT, upgradePool } from "../upgrade/upgrade-helpers";

let pool: Awaited<ReturnType<typeof upgradePool>>;
beforeAll(async () => {
  pool = await upgradePool(6);
}, 300_000);

const take = (n: number) => Array.from({ length: n }, () => pool.take().workspaceId);
const handler = createQueueHandler(defaultQueueDeps);

const runStatus = async (runId: string) =>
  (await env.DB.prepare("SELECT status FROM runs WHERE id = ?").bind(runId).first<{ status: string }>())?.status;

async function waitRun(runId: string, status: string): Promise<void> {
  await vi.waitFor(
    async () => {
      const now = await runStatus(runId);
      if (now !== status) throw new Error(`run ${runId} is ${now}, waiting for ${status}`);
    },
    { timeout: 30_000, interval: 50 },
  );
}

const { readRollout, waitRollout, action, startKeptRollout } = rolloutDriver(() => pool);

describe("upgrade rollouts and manual upgrades of the same workspace (N15)", {
  timeout: UPGRADE_TEST_TIMEOUT * 2,
}, () => {
  it("a manual E5 is 409 while the item is pending, waiting for confirmation and applying, and touches nothing; once the item ended E5 finds nothing to upgrade", async () => {
    const [ws] = take(1) as [string];
    const rollout = await startKeptRollout([ws]);
    const refused = async () => {
      const res = await e5(pool.noCodeModuleId, ws, pool.ownerToken);
      expect(res.status, res.text).toBe(409);
      expect(res.text).toContain(rollout.id);
    };
    await refused(); // pending
    expect(await upgradeRunsOf(ws)).toEqual([]);

    await deliverBatch(handler, PROVISION_QUEUE_NAME, [rollout.step]);
    const waiting = await readRollout(rollout.id);
    expect(itemStatuses(waiting)).toEqual(["waiting-confirmation"]);
    const runId = waiting.attributes.items[0].run as string;
    await refused(); // waiting-confirmation: the rollout's plan is neither discarded nor replaced
    expect(await upgradeRunsOf(ws)).toEqual([{ id: runId, status: "planned" }]);

    const kept: ProvisionMessage[] = [];
    await rolloutAction(createDb(env.DB), rollout.id, "confirm", {
      now: Date.now,
      send: async (m) => void kept.push(m),
    });
    expect(itemStatuses(await readRollout(rollout.id))).toEqual(["applying"]);
    await refused(); // applying
    expect(await upgradeRunsOf(ws)).toEqual([{ id: runId, status: "apply_queued" }]);

    // The apply runs; the rollout hears of it through the real queue and completes.
    await deliverBatch(
      handler,
      PROVISION_QUEUE_NAME,
      kept.filter((m) => m.kind === "apply-run"),
    );
    const done = await waitRollout(rollout.id, ["completed"]);
    expect(itemStatuses(done)).toEqual(["applied"]);
    const after = await e5(pool.noCodeModuleId, ws, pool.ownerToken);
    expect(after.status, after.text).toBe(200);
    expect(after.json.data.attributes.message).toContain("No upgrade available");
    expect(await upgradeRunsOf(ws)).toEqual([{ id: runId, status: "applied" }]);
  });

  it("a manual E5 that passed its check just before the rollout was created: the rollout skips the workspace with a reason, the manual plan stays, only it applies", async () => {
    const [raced, other] = take(2) as [string, string];
    const rollout = await startKeptRollout([raced, other], { "batch-size": 2 });
    // E5's work after its rollout check (which ran before the rollout existed).
    const db = createDb(env.DB);
    const module = (await findNoCodeModule(db, pool.noCodeModuleId))!;
    const manual = await planUpgrade(
      env,
      db,
      module,
      (await findWorkspace(db, raced))!,
      { vars: [], message: "by hand" },
      Date.now(),
    );
    expect(manual.kind).toBe("planned");
    const manualRunId = (manual as { run: { id: string } }).run.id;

    await deliverBatch(handler, PROVISION_QUEUE_NAME, [rollout.step]);
    const waiting = await readRollout(rollout.id);
    expect(itemStatuses(waiting)).toEqual(["skipped", "waiting-confirmation"]);
    expect(waiting.attributes.items[0].reason).toContain(
      `a run (${manualRunId}) was started on the workspace after the rollout began`,
    );
    expect(waiting.attributes.items[0].run).toBeNull();
    expect(await upgradeRunsOf(raced)).toEqual([{ id: manualRunId, status: "planned" }]);

    expect((await action(rollout.id, "confirm")).status).toBe(202);
    const done = await waitRollout(rollout.id, ["completed"], (d) => itemStatuses(d)[1] === "applied");
    expect(itemStatuses(done)).toEqual(["skipped", "applied"]);

    // The manual upgrade is the owner's to confirm; it applies, once.
    const confirmed = await e7(pool.noCodeModuleId, raced, manualRunId, pool.ownerToken);
    expect(confirmed.status, confirmed.text).toBe(200);
    await waitRun(manualRunId, "applied");
    expect(await upgradeRunsOf(raced)).toEqual([{ id: manualRunId, status: "applied" }]);
    expect(itemStatuses(await readRollout(rollout.id))).toEqual(["skipped", "applied"]);
  });

  it("a plan made by hand before the rollout began, still waiting for its E7: skipped with a reason, never discarded and never counted as a failure", async () => {
    const [ws] = take(1) as [string];
    const planned = await e5(pool.noCodeModuleId, ws, pool.ownerToken);
    expect(planned.status, planned.text).toBe(200);
    const manualRunId = planned.json.data.id as string;
    const created = await tfe("POST", `no-code-modules/${pool.noCodeModuleId}/upgrade-rollouts`, {
      token: pool.ownerToken,
      body: {
        data: {
          type: "upgrade-rollouts",
          attributes: { "max-failures": 0 },
          relationships: { workspaces: { data: [{ type: "workspaces", id: ws }] } },
        },
      },
    });
    expect(created.status, created.text).toBe(201);
    const id = created.json.data.id as string;
    const done = await waitRollout(
      id,
      ["completed", "failed"],
      (d) => itemStatuses(d)[0] !== "pending" && itemStatuses(d)[0] !== "planning",
    );
    expect(done.attributes.status).toBe("completed");
    expect(itemStatuses(done)).toEqual(["skipped"]);
    expect(done.attributes.items[0].reason).toContain(`a run (${manualRunId}) started outside the rollout is planned`);
    expect(await upgradeRunsOf(ws)).toEqual([{ id: manualRunId, status: "planned" }]);

    expect((await e7(pool.noCodeModuleId, ws, manualRunId, pool.ownerToken)).status).toBe(200);
    await waitRun(manualRunId, "applied");
    expect(await upgradeRunsOf(ws)).toEqual([{ id: manualRunId, status: "applied" }]);
  });

  it("the rollout's own plan discarded by someone else: the item is skipped with a reason, nothing is planned again, and the rollout moves on", async () => {
    const [first, second] = take(2) as [string, string];
    const id = (
      await tfe("POST", `no-code-modules/${pool.noCodeModuleId}/upgrade-rollouts`, {
        token: pool.ownerToken,
        body: {
          data: {
            type: "upgrade-rollouts",
            attributes: { "batch-size": 1 },
            relationships: { workspaces: { data: [first, second].map((w) => ({ type: "workspaces", id: w })) } },
          },
        },
      })
    ).json.data.id as string;
    const waiting = await waitRollout(id, ["waiting-confirmation"]);
    const runId = waiting.attributes.items[0].run as string;
    expect((await tfe("POST", `runs/${runId}/actions/discard`, { token: pool.ownerToken })).status).toBe(202);

    // The discard lets the rollout know: it moves to the second batch without a confirm.
    const next = await waitRollout(
      id,
      ["waiting-confirmation"],
      (d) => d.attributes["current-batch"] === 2 && itemStatuses(d)[1] === "waiting-confirmation",
    );
    expect(itemStatuses(next)).toEqual(["skipped", "waiting-confirmation"]);
    expect(next.attributes.items[0].reason).toContain("discarded outside the rollout");
    expect(await upgradeRunsOf(first)).toEqual([{ id: runId, status: "discarded" }]);
    expect((await action(id, "cancel")).status).toBe(202);
    expect(itemStatuses(await readRollout(id))).toEqual(["skipped", "canceled"]);
    expect((await upgradeRunsOf(second)).map((r) => r.status)).toEqual(["discarded"]);
  });
});
