/**
 * Fleet upgrades (decision N15) end to end through HTTP, the real D1 and the
 * real Queue: one module with a pool of workspaces applied at 1.0.0, the pin at 1.1.0
 * (v1 → v2 destroys `random_id.legacy`, so every plan has a destruction), then 1.2.0
 * (the v1 files again: an empty plan) for the auto-confirmed rollouts. Each rollout lists
 * its workspaces; one rollout at a time per module, so the tests run in order.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { createDb } from "../../../../src/db/client";
import { applyRunMessage, type ProvisionMessage } from "../../../../src/nocode/messages/provision";
import { rolloutAction } from "../../../../src/nocode/rollouts/service";
import { createQueueHandler, defaultQueueDeps, PROVISION_DLQ_NAME, PROVISION_QUEUE_NAME } from "../../../../src/queue";
import { upgradeFixtureFiles } from "../../../fixtures/terraform-upgrade";
import { tfe } from "../../../helpers/nocode";
import { optionEntry, publishVersion, varEntry } from "../../../helpers/nocode-modules";
import { deliverBatch } from "../../../helpers/queue";
import { itemStatuses, itemsDone, rolloutDriver, upgradeRunsOf } from "../../../helpers/rollouts";
import {
  e5,
  e7,
  patchModule,
  UPGRADE_TEST_TIMEOUT,
  upgradePool,
  workspaceAttributes,
} from "../upgrade/upgrade-helpers";

/** Workspaces in the pool: enough for every test below, each taking its own. */
const POOL = 25;
let pool: Awaited<ReturnType<typeof upgradePool>>;
let orgTokenForLater = "";
beforeAll(async () => {
  pool = await upgradePool(POOL);
}, 300_000);

const take = (n: number) => Array.from({ length: n }, () => pool.take().workspaceId);

const { startRollout, newRollout, readRollout, waitRollout, action, startKeptRollout } = rolloutDriver(() => pool);

describe("upgrade rollouts (N15)", { timeout: UPGRADE_TEST_TIMEOUT * 2 }, () => {
  it("validates input, refuses the organization token (404) and workspaces of other modules (422)", async () => {
    const bad = await startRollout({ "batch-size": 0, "auto-confirm": "always" });
    expect(bad.status).toBe(422);
    expect(bad.text).toContain("batch-size");
    expect(bad.text).toContain("auto-confirm");
    const orgToken = (await tfe("POST", `organizations/${pool.org}/authentication-token`, {})).json.data.attributes
      .token as string;
    expect((await startRollout({}, undefined, orgToken)).status).toBe(404);
    orgTokenForLater = orgToken;
    expect((await startRollout({}, ["ws-AAAAAAAAAAAAAAAA"])).status).toBe(422);
    expect((await tfe("GET", "upgrade-rollouts/rollout-AAAAAAAAAAAAAAAA", { token: pool.ownerToken })).status).toBe(
      404,
    );
  });

  it("auto-confirm never: every plan waits; confirm applies the batch; a second rollout is 409 meanwhile; manual E5 on an item is 409", async () => {
    const ids = take(2);
    const created = await startRollout({ "batch-size": 2 }, ids);
    expect(created.status, created.text).toBe(201);
    expect(created.json.data.type).toBe("upgrade-rollouts");
    expect(created.json.data.attributes).toMatchObject({
      "batch-size": 2,
      "auto-confirm": "never",
      "max-failures": 0,
      "target-version": "1.1.0",
    });
    const id = created.json.data.id as string;
    expect((await startRollout({}, take(1))).status).toBe(409);
    expect((await e5(pool.noCodeModuleId, ids[0]!, pool.ownerToken)).status).toBe(409);
    const waiting = await waitRollout(id, ["waiting-confirmation"]);
    expect(itemStatuses(waiting)).toEqual(["waiting-confirmation", "waiting-confirmation"]);
    expect(waiting.attributes.items[0]["resource-destructions"]).toBeGreaterThan(0);
    expect(waiting.attributes.items[0].run).toMatch(/^run-/);
    expect((await action(id, "resume")).status).toBe(409);
    expect((await action(id, "confirm")).status).toBe(202);
    const done = await waitRollout(id, ["completed"]);
    expect(itemStatuses(done)).toEqual(["applied", "applied"]);
    for (const ws of ids)
      expect((await workspaceAttributes(ws, pool.ownerToken)).attributes["no-code-upgrade-available"]).toBe(false);
    expect((await action(id, "confirm")).status).toBe(409);
    expect((await action(id, "cancel")).status).toBe(409);
  });

  it("a destruction stops a no-destructions batch; a plan confirmed by hand through E7 counts as confirmed", async () => {
    const ids = take(2);
    const id = await newRollout({ "batch-size": 1, "auto-confirm": "no-destructions" }, ids);
    const waiting = await waitRollout(id, ["waiting-confirmation"]);
    expect(itemStatuses(waiting)).toEqual(["waiting-confirmation", "pending"]);
    const runId = waiting.attributes.items[0].run as string;
    expect((await e7(pool.noCodeModuleId, ids[0]!, runId, pool.ownerToken)).status).toBe(200);
    const next = await waitRollout(id, ["waiting-confirmation"], (d) => d.attributes["current-batch"] === 2);
    expect(itemStatuses(next)).toEqual(["applied", "waiting-confirmation"]);
    expect((await action(id, "cancel")).status).toBe(202);
    const canceled = await readRollout(id);
    expect(canceled.attributes.status).toBe("canceled");
    expect(itemStatuses(canceled)).toEqual(["applied", "canceled"]);
    // cancel discards the unconfirmed plan; the workspace is free for a manual E5 again.
    expect((await upgradeRunsOf(ids[1]!)).map((r) => r.status)).toEqual(["discarded"]);
    const manual = await e5(pool.noCodeModuleId, ids[1]!, pool.ownerToken);
    expect(manual.status, manual.text).toBe(200);
    expect((await tfe("POST", `runs/${manual.json.data.id}/actions/discard`, { token: pool.ownerToken })).status).toBe(
      202,
    );
  });

  it("errored items over max-failures end the rollout failed; the rest is canceled", async () => {
    const ids = take(4);
    // Two workspaces hold a region the module's options then forbid: their upgrades cannot be planned (422 → errored).
    for (const ws of ids.slice(0, 2)) {
      const added = await tfe("POST", `workspaces/${ws}/vars`, {
        token: pool.ownerToken,
        body: { data: varEntry("region", "us-east-1") },
      });
      expect(added.status, added.text).toBe(201);
    }
    await patchModule(pool, {}, [optionEntry("region", ["eu-west-1", "eu-central-1"])]);
    const id = await newRollout({ "batch-size": 1, "max-failures": 1, "auto-confirm": "never" }, ids);
    const failed = await waitRollout(id, ["failed"]);
    expect(failed.attributes.reason).toContain("max-failures (1)");
    expect(itemStatuses(failed)).toEqual(["errored", "errored", "canceled", "canceled"]);
    expect(failed.attributes.items[0].reason).toContain("region");
    expect(await upgradeRunsOf(ids[2]!)).toEqual([]);
    await patchModule(pool, {}, []);
  });

  it("a workspace whose variables change mid-rollout is skipped with a reason; pause and resume", async () => {
    const ids = take(2);
    const id = await newRollout({ "batch-size": 1 }, ids);
    await waitRollout(id, ["waiting-confirmation"]);
    expect((await action(id, "pause")).status).toBe(202);
    expect((await action(id, "pause")).status).toBe(409);
    expect((await action(id, "confirm")).status).toBe(409);
    // Someone else writes a var of the second workspace while the rollout is paused.
    const added = await tfe("POST", `workspaces/${ids[1]}/vars`, {
      token: pool.ownerToken,
      body: { data: varEntry("length", "12") },
    });
    expect(added.status, added.text).toBe(201);
    expect((await action(id, "resume")).status).toBe(202);
    await waitRollout(id, ["waiting-confirmation"]);
    expect((await action(id, "confirm")).status).toBe(202);
    const done = await waitRollout(id, ["completed"], itemsDone);
    expect(itemStatuses(done)).toEqual(["applied", "skipped"]);
    expect(done.attributes.items[1].reason).toContain("variables changed");
    expect(await upgradeRunsOf(ids[1]!)).toEqual([]);
  });

  it("auto-confirm no-changes: empty plans are confirmed and applied batch after batch; redelivered steps upgrade nothing twice", async () => {
    const v3 = await publishVersion(
      pool.org,
      pool.registryModule,
      "1.2.0",
      pool.ownerToken,
      upgradeFixtureFiles("upgrade-v1"),
    );
    expect(v3.status).toBe("ok");
    await patchModule(pool, { "version-pin": "1.2.0" });
    const ids = take(4);
    const rollout = await startKeptRollout(ids, { "batch-size": 2, "auto-confirm": "no-changes" });
    // The first step delivered three times in one batch, then again later.
    const handler = createQueueHandler(defaultQueueDeps);
    await deliverBatch(handler, PROVISION_QUEUE_NAME, [rollout.step, rollout.step, rollout.step]);
    const done = await waitRollout(rollout.id, ["completed"], itemsDone);
    expect(itemStatuses(done)).toEqual(["applied", "applied", "applied", "applied"]);
    expect(
      done.attributes.items.map(
        (i: { "resource-additions": number; "resource-destructions": number }) =>
          i["resource-additions"] + i["resource-destructions"],
      ),
    ).toEqual([0, 0, 0, 0]);
    await deliverBatch(handler, PROVISION_QUEUE_NAME, [rollout.step, rollout.step]);
    for (const ws of ids) {
      expect((await upgradeRunsOf(ws)).map((r) => r.status)).toEqual(["applied"]);
      expect((await workspaceAttributes(ws, pool.ownerToken)).attributes["no-code-upgrade-available"]).toBe(false);
    }
    expect((await readRollout(rollout.id)).attributes.status).toBe("completed");
  });

  it("the pin moving during the rollout ends it failed with that reason and discards waiting plans", async () => {
    const ids = take(1);
    const id = await newRollout({}, ids);
    await waitRollout(id, ["waiting-confirmation"]);
    // E2 moves the pin: the rollout hears of it at once.
    await patchModule(pool, { "version-pin": "1.1.0" });
    const failed = await waitRollout(id, ["failed"]);
    expect(failed.attributes.reason).toContain("version pin moved from 1.2.0 to 1.1.0");
    expect(itemStatuses(failed)).toEqual(["canceled"]);
    expect(failed.attributes.items[0].reason).toContain("the rollout failed");
    expect((await upgradeRunsOf(ids[0]!)).map((r) => r.status)).toEqual(["discarded"]);
  });

  it("cancel and pause before the first step: the step then plans nothing; resume plans; cancel discards the waiting plan", async () => {
    const handler = createQueueHandler(defaultQueueDeps);
    const start = (ids: string[]) => startKeptRollout(ids);
    // Canceled while pending.
    const a = take(1);
    const first = await start(a);
    expect((await readRollout(first.id)).attributes.status).toBe("pending");
    expect((await action(first.id, "cancel")).status).toBe(202);
    await deliverBatch(handler, PROVISION_QUEUE_NAME, [first.step, first.step]);
    const canceled = await readRollout(first.id);
    expect([canceled.attributes.status, ...itemStatuses(canceled)]).toEqual(["canceled", "canceled"]);
    expect(await upgradeRunsOf(a[0]!)).toEqual([]);
    expect((await action(first.id, "resume")).status).toBe(409);

    // Paused while pending: the step does nothing until resume.
    const b = take(1);
    const second = await start(b);
    expect((await action(second.id, "pause")).status).toBe(202);
    await deliverBatch(handler, PROVISION_QUEUE_NAME, [second.step]);
    expect(itemStatuses(await readRollout(second.id))).toEqual(["pending"]);
    expect(await upgradeRunsOf(b[0]!)).toEqual([]);
    expect((await action(second.id, "resume")).status).toBe(202);
    const waiting = await waitRollout(second.id, ["waiting-confirmation"]);
    // A duplicated step while waiting plans nothing again.
    await deliverBatch(handler, PROVISION_QUEUE_NAME, [second.step, second.step]);
    expect((await upgradeRunsOf(b[0]!)).map((r) => r.id)).toEqual([waiting.attributes.items[0].run]);
    // Paused while waiting, then canceled: the plan is discarded.
    expect((await action(second.id, "pause")).status).toBe(202);
    expect((await action(second.id, "cancel")).status).toBe(202);
    expect((await upgradeRunsOf(b[0]!)).map((r) => r.status)).toEqual(["discarded"]);
    expect(itemStatuses(await readRollout(second.id))).toEqual(["canceled"]);
  });

  it("a step that finds an item mid-planning by another step retries later; after the lease it takes the item over and plans once", async () => {
    const ids = take(1);
    const rollout = await startKeptRollout(ids);
    // As if another delivery had just taken the item.
    await env.DB.prepare("UPDATE upgrade_rollout_items SET status = 'planning', updated_at = ? WHERE rollout_id = ?")
      .bind(Date.now(), rollout.id)
      .run();
    const handler = createQueueHandler(defaultQueueDeps);
    const busy = await deliverBatch(handler, PROVISION_QUEUE_NAME, [rollout.step]);
    expect(busy.result.retryMessages.length).toBe(1);
    expect(await upgradeRunsOf(ids[0]!)).toEqual([]);
    // That delivery died: once the lease ran out, a redelivery plans the workspace, once.
    await env.DB.prepare("UPDATE upgrade_rollout_items SET updated_at = ? WHERE rollout_id = ?")
      .bind(Date.now() - 60_000, rollout.id)
      .run();
    await deliverBatch(handler, PROVISION_QUEUE_NAME, [rollout.step, rollout.step]);
    const waiting = await waitRollout(rollout.id, ["waiting-confirmation"]);
    expect((await upgradeRunsOf(ids[0]!)).map((r) => r.id)).toEqual([waiting.attributes.items[0].run]);
    expect((await action(rollout.id, "cancel")).status).toBe(202);
  });

  it("an apply that errors pushes the rollout over max-failures: failed; an apply already running still finishes", async () => {
    const ids = take(2);
    const id = await newRollout({ "batch-size": 2 }, ids);
    const waiting = await waitRollout(id, ["waiting-confirmation"], (d) =>
      itemStatuses(d).every((x: string) => x === "waiting-confirmation"),
    );
    const runIds = waiting.attributes.items.map((i: { run: string }) => i.run) as string[];
    // Confirm through the service, keeping the apply messages to deliver them by hand.
    const kept: ProvisionMessage[] = [];
    await rolloutAction(createDb(env.DB), id, "confirm", {
      now: Date.now,
      send: async (m) => void kept.push(m),
    });
    expect(
      kept
        .filter((m) => m.kind === "apply-run")
        .map((m) => (m as { runId: string }).runId)
        .sort(),
    ).toEqual([...runIds].sort());
    expect(itemStatuses(await readRollout(id))).toEqual(["applying", "applying"]);
    const handler = createQueueHandler(defaultQueueDeps);
    // The first apply gave up after its retries (the dead-letter queue marks the run errored).
    await deliverBatch(handler, PROVISION_DLQ_NAME, [applyRunMessage(runIds[0]!)]);
    const failed = await waitRollout(id, ["failed"]);
    expect(failed.attributes.reason).toContain("max-failures (0)");
    expect(failed.attributes.items[0].status).toBe("errored");
    expect(failed.attributes.items[1].status).toBe("applying");
    // The second apply runs and its item ends applied.
    await deliverBatch(handler, PROVISION_QUEUE_NAME, [applyRunMessage(runIds[1]!)]);
    const after = await waitRollout(id, ["failed"], (d) => d.attributes.items[1].status === "applied");
    expect(itemStatuses(after)).toEqual(["errored", "applied"]);
  });

  it("two concurrent creates for one module: one 201, one 409", async () => {
    const [x, y] = await Promise.all([startRollout({}, take(1)), startRollout({}, take(1))]);
    expect([x.status, y.status].sort()).toEqual([201, 409]);
    const id = (x.status === 201 ? x : y).json.data.id as string;
    expect((await action(id, "cancel")).status).toBe(202);
  });

  it("default selection: every workspace with an upgrade available, in batches of 8 confirmed by the action; the organization token sees nothing", async () => {
    const all = (
      await env.DB.prepare("SELECT id FROM workspaces WHERE no_code_module_id = ?")
        .bind(pool.noCodeModuleId)
        .all<{ id: string }>()
    ).results;
    expect(all.length).toBe(POOL);
    const expected: string[] = [];
    for (const { id } of all)
      if ((await workspaceAttributes(id, pool.ownerToken)).attributes["no-code-upgrade-available"]) expected.push(id);
    expected.sort();
    expect(expected.length).toBeGreaterThan(10);
    const created = await startRollout({ "batch-size": 8 });
    expect(created.status, created.text).toBe(201);
    const id = created.json.data.id as string;
    expect(created.json.data.relationships.workspaces.data.map((w: { id: string }) => w.id).sort()).toEqual(expected);
    for (const name of ["confirm", "pause", "cancel"])
      expect((await action(id, name, orgTokenForLater)).status).toBe(404);
    expect((await tfe("GET", `upgrade-rollouts/${id}`, { token: orgTokenForLater })).status).toBe(404);
    const batches = created.json.data.attributes["batch-count"] as number;
    expect(batches).toBe(Math.ceil(expected.length / 8));
    for (let batch = 1; batch <= batches; batch++) {
      const waiting = await waitRollout(id, ["waiting-confirmation"], (d) => d.attributes["current-batch"] === batch);
      expect(itemStatuses(waiting).filter((s: string) => s === "waiting-confirmation").length).toBeGreaterThan(0);
      expect((await action(id, "confirm")).status).toBe(202);
    }
    const done = await waitRollout(id, ["completed"], itemsDone);
    expect(new Set(itemStatuses(done))).toEqual(new Set(["applied"]));
    for (const w of expected)
      expect((await workspaceAttributes(w, pool.ownerToken)).attributes["no-code-upgrade-available"]).toBe(false);
    expect((await startRollout({})).status).toBe(422);
  });
});
