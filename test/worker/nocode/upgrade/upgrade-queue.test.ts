/**
 * The run lifecycle of an upgrade run after E7, on the provisioning queue (decisions N7,
 * N8, N11), driven through the real `queue()` handler with
 * `createMessageBatch`/`getQueueResult`: a redelivered apply message does not apply
 * twice, a transient fault is retried with backoff (injected through the consumer's
 * dependencies, N11), a poison message is acknowledged, and the dead-letter consumer
 * marks the run `errored`. To own every delivery, E7 is called through its service with
 * a `send` that records the message instead of queueing it.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { createDb } from "../../../../src/db/client";
import { applyRunMessage, type ProvisionMessage } from "../../../../src/nocode/messages/provision";
import type { ProvisionConsumerDeps } from "../../../../src/nocode/queue/consumer";
import type { RunStepDeps } from "../../../../src/nocode/runs/lifecycle";
import { RUN_GAVE_UP } from "../../../../src/nocode/runs/lifecycle";
import { confirmUpgrade } from "../../../../src/nocode/upgrade/confirm";
import { createQueueHandler, defaultQueueDeps, PROVISION_DLQ_NAME, PROVISION_QUEUE_NAME } from "../../../../src/queue";
import { V1_ADDRESSES, V2_ADDRESSES } from "../../../fixtures/terraform-upgrade";
import { jsonOutputOf, tfe } from "../../../helpers/nocode";
import type { varEntry } from "../../../helpers/nocode-modules";
import { deliverBatch } from "../../../helpers/queue";
import {
  actionsByAddress,
  e5,
  e6,
  e7,
  UPGRADE_TEST_TIMEOUT,
  upgradePool,
  waitForUpgrade,
  workspaceAttributes,
} from "./upgrade-helpers";

let pool: Awaited<ReturnType<typeof upgradePool>>;
beforeAll(async () => {
  pool = await upgradePool(7);
}, UPGRADE_TEST_TIMEOUT);

/** Deliver `bodies` as one batch through the real queue handler; records retry delays. */
function deliver(bodies: unknown[], options: { runs?: Partial<RunStepDeps>; queue?: string; attempts?: number } = {}) {
  const deps: ProvisionConsumerDeps = { ...defaultQueueDeps, runs: options.runs ?? {} };
  return deliverBatch(createQueueHandler(deps), options.queue ?? PROVISION_QUEUE_NAME, bodies, options.attempts);
}

/** An upgrade run confirmed by E7 whose apply message was kept here instead of queued. */
async function confirmedUpgrade(vars: ReturnType<typeof varEntry>[] = []) {
  const ctx = { ...pool, ...pool.take() };
  const started = await e5(ctx.noCodeModuleId, ctx.workspaceId, ctx.ownerToken, vars);
  expect(started.status, started.text).toBe(200);
  const runId = started.json.data.id as string;
  const kept: ProvisionMessage[] = [];
  await confirmUpgrade(createDb(env.DB), ctx.noCodeModuleId, ctx.workspaceId, runId, {
    now: Date.now,
    send: async (m) => void kept.push(m),
  });
  expect(kept).toEqual([applyRunMessage(runId)]);
  return { ...ctx, runId, message: kept[0]! };
}

const status = async (ctx: { noCodeModuleId: string; workspaceId: string; ownerToken: string }, runId: string) =>
  (await e6(ctx.noCodeModuleId, ctx.workspaceId, runId, ctx.ownerToken)).json.data.attributes.status as string;

const stateVersionsOf = async (workspaceId: string) =>
  (
    await env.DB.prepare("SELECT run_id, serial, resources FROM state_versions WHERE workspace_id = ? ORDER BY serial")
      .bind(workspaceId)
      .all<{
        run_id: string;
        serial: number;
        resources: string;
      }>()
  ).results;

describe("upgrade runs on the queue (N11)", { timeout: UPGRADE_TEST_TIMEOUT }, () => {
  it("E7 leaves the run apply_queued with its apply message; the apply records the v2 state", async () => {
    const ctx = await confirmedUpgrade();
    expect(await status(ctx, ctx.runId)).toBe("apply_queued");
    const { result, ids } = await deliver([ctx.message]);
    expect(result.explicitAcks).toEqual(ids);
    expect(await status(ctx, ctx.runId)).toBe("applied");
    const svs = await stateVersionsOf(ctx.workspaceId);
    expect(svs.map((s) => [s.serial, JSON.parse(s.resources)])).toEqual([
      [1, V1_ADDRESSES],
      [2, V2_ADDRESSES],
    ]);
    expect(svs[1]!.run_id).toBe(ctx.runId);
    expect((await workspaceAttributes(ctx.workspaceId, ctx.ownerToken)).attributes["resource-count"]).toBe(
      V2_ADDRESSES.length,
    );
  });

  it("a redelivered apply message does not apply twice (same batch, and later)", async () => {
    const ctx = await confirmedUpgrade();
    const first = await deliver([ctx.message, ctx.message]);
    expect(first.result.explicitAcks).toEqual(first.ids);
    expect(first.result.retryMessages).toEqual([]);
    const after = await workspaceAttributes(ctx.workspaceId, ctx.ownerToken);
    const again = await deliver([ctx.message], { attempts: 2 });
    expect(again.result.explicitAcks).toEqual(again.ids);
    expect((await stateVersionsOf(ctx.workspaceId)).map((s) => s.serial)).toEqual([1, 2]);
    const later = await workspaceAttributes(ctx.workspaceId, ctx.ownerToken);
    expect(later.relationships["current-state-version"]).toEqual(after.relationships["current-state-version"]);
    expect(later.attributes["latest-change-at"]).toBe(after.attributes["latest-change-at"]);
    expect(await status(ctx, ctx.runId)).toBe("applied");
  });

  it("after the real flow (E7 through the API, applied by the real consumer) a redelivery changes nothing", async () => {
    const ctx = { ...pool, ...pool.take() };
    const started = await e5(ctx.noCodeModuleId, ctx.workspaceId, ctx.ownerToken);
    const runId = started.json.data.id as string;
    expect((await e7(ctx.noCodeModuleId, ctx.workspaceId, runId, ctx.ownerToken)).status).toBe(200);
    await waitForUpgrade(ctx.noCodeModuleId, ctx.workspaceId, runId, ctx.ownerToken, ["applied"]);
    const before = await stateVersionsOf(ctx.workspaceId);
    const { result, ids } = await deliver([applyRunMessage(runId)], { attempts: 3 });
    expect(result.explicitAcks).toEqual(ids);
    expect(await stateVersionsOf(ctx.workspaceId)).toEqual(before);
  });

  it("a transient fault is retried with backoff (2^attempts s); the retry applies once", async () => {
    const ctx = await confirmedUpgrade();
    const failing = await deliver([ctx.message], {
      attempts: 3,
      runs: {
        beforeApplyCommit: async () => {
          throw new Error("D1 hiccup");
        },
      },
    });
    expect(failing.result.explicitAcks).toEqual([]);
    expect(failing.result.retryMessages).toEqual([{ msgId: failing.ids[0] }]);
    expect(failing.delays[failing.ids[0]!]).toBe(8);
    expect(await status(ctx, ctx.runId)).toBe("applying");
    expect((await stateVersionsOf(ctx.workspaceId)).map((s) => s.serial)).toEqual([1]);

    const retried = await deliver([ctx.message], { attempts: 4 });
    expect(retried.result.explicitAcks).toEqual(retried.ids);
    expect(await status(ctx, ctx.runId)).toBe("applied");
    expect((await stateVersionsOf(ctx.workspaceId)).map((s) => s.serial)).toEqual([1, 2]);
  });

  it("poison messages are acknowledged and change nothing; the real message still applies", async () => {
    const ctx = await confirmedUpgrade();
    const poison = [
      { v: 1, kind: "apply-run", runId: "not-a-run" },
      { v: 2, kind: "apply-run", runId: ctx.runId },
      { kind: "apply-run", runId: ctx.runId },
      "apply-run",
      null,
    ];
    const { result, ids } = await deliver(poison);
    expect(result.explicitAcks).toEqual(ids);
    expect(result.retryMessages).toEqual([]);
    expect(await status(ctx, ctx.runId)).toBe("apply_queued");
    await deliver([ctx.message]);
    expect(await status(ctx, ctx.runId)).toBe("applied");
  });

  it("the dead-letter consumer marks the run errored; the state stays v1 and E5 can plan the upgrade again", async () => {
    const ctx = await confirmedUpgrade();
    const before = await workspaceAttributes(ctx.workspaceId, ctx.ownerToken);
    const { result, ids } = await deliver([ctx.message], { queue: PROVISION_DLQ_NAME, attempts: 6 });
    expect(result.explicitAcks).toEqual(ids);
    expect(await status(ctx, ctx.runId)).toBe("errored");
    const run = await tfe("GET", `runs/${ctx.runId}`, { token: ctx.ownerToken });
    expect(run.json.data.attributes["error-message"]).toBe(RUN_GAVE_UP);
    const after = await workspaceAttributes(ctx.workspaceId, ctx.ownerToken);
    expect(after.relationships["current-state-version"]).toEqual(before.relationships["current-state-version"]);
    expect(after.attributes["resource-count"]).toBe(V1_ADDRESSES.length);
    // A late delivery of the apply after the DLQ verdict does nothing.
    await deliver([ctx.message], { attempts: 7 });
    expect(await status(ctx, ctx.runId)).toBe("errored");
    expect((await stateVersionsOf(ctx.workspaceId)).map((s) => s.serial)).toEqual([1]);
    // E7 switched the workspace to 1.1.0 before the apply failed; the applied state is still
    // v1, so E5 does not answer "nothing to upgrade": it plans v1 → v2 again.
    expect(after.attributes["source-module-id"]).toMatch(/\/1\.1\.0$/);
    const retry = await e5(ctx.noCodeModuleId, ctx.workspaceId, ctx.ownerToken);
    expect(retry.status, retry.text).toBe(200);
    expect(retry.json.data.attributes.status).toBe("planned");
    const plan = await tfe("GET", `runs/${retry.json.data.id}/plan`, { token: ctx.ownerToken });
    const json = await jsonOutputOf(plan.json.data.id, ctx.ownerToken);
    expect(actionsByAddress(json.json.resource_changes)).toMatchObject({
      "random_id.legacy": "delete",
      "random_uuid.added": "create",
    });
  });
});
