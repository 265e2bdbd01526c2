/**
 * Runs of no-code workspaces (decisions N7, N10, N11): E4's first run through the real
 * Queue consumer (auto-apply → `applied`, else waiting at `planned`), plans and their
 * JSON output, run actions, and the lifecycle's guarantees driven through the real
 * `queue()` handler with `createMessageBatch`/`getQueueResult`: idempotent redelivery,
 * transient faults retried with backoff (injected through the consumer's dependencies),
 * poison messages acknowledged, the dead-letter queue marking runs `errored`; a batch's
 * plan messages planned together in two D1 calls (docs/performance.md), each still with its own
 * outcome and retry.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { createDb } from "../../../../src/db/client";
import { recordD1Statements } from "../../../../src/db/d1-guard";
import { applyRunMessage, planRunMessage } from "../../../../src/nocode/messages/provision";
import { findNoCodeModule, listVariableOptions } from "../../../../src/nocode/no-code-modules/repo";
import { planRun } from "../../../../src/nocode/planner";
import type { ProvisionConsumerDeps } from "../../../../src/nocode/queue/consumer";
import { findModuleVersionById, versionSummary } from "../../../../src/nocode/registry/repo";
import {
  buildRunConfiguration,
  effectiveValues,
  type RunConfiguration,
  summaryOfVersion,
} from "../../../../src/nocode/runs/configuration";
import { createRun, enqueueRunPlan } from "../../../../src/nocode/runs/create";
import type { RunStepDeps } from "../../../../src/nocode/runs/lifecycle";
import { RUN_GAVE_UP } from "../../../../src/nocode/runs/lifecycle";
import { transitionRun } from "../../../../src/nocode/runs/repo";
import { findWorkspace, listWorkspaceVars, type WorkspaceVarRow } from "../../../../src/nocode/workspaces/repo";
import { createQueueHandler, defaultQueueDeps, PROVISION_DLQ_NAME, PROVISION_QUEUE_NAME } from "../../../../src/queue";
import { ADMIN, bootstrapOrg, createMember, createOrgToken, jsonOutputOf, tfe } from "../../../helpers/nocode";
import {
  createNoCodeWorkspace,
  type NoCodeOrg,
  noCodeOrg,
  PET_RESOURCES,
  varEntry,
  waitForRun,
} from "../../../helpers/nocode-modules";
import { deliverBatch } from "../../../helpers/queue";

const db = createDb(env.DB);

let ctx: NoCodeOrg;
beforeAll(async () => {
  ctx = await noCodeOrg();
});

/** Run one batch of `bodies` through the real queue handler with `runs` overrides; records retry delays. */
function deliver(bodies: unknown[], runs: Partial<RunStepDeps> = {}, queue = PROVISION_QUEUE_NAME, attempts = 1) {
  const deps: ProvisionConsumerDeps = { ...defaultQueueDeps, runs };
  return deliverBatch(createQueueHandler(deps), queue, bodies, attempts);
}

/** A workspace without auto-apply whose first run waits at `planned`. */
async function plannedWorkspace(vars = [varEntry("prefix", "pet")]) {
  const { workspace, runId } = await createNoCodeWorkspace(ctx.noCodeModuleId, ctx.ownerToken, {}, vars);
  const run = await waitForRun(runId, ctx.ownerToken, ["planned", "errored"]);
  expect(run.attributes.status).toBe("planned");
  return { workspace, runId };
}

/**
 * A `pending` run of the workspace's current configuration (optionally with other var
 * values), created with the exported run functions but not queued: the test drives it.
 */
async function pendingRun(
  workspaceId: string,
  options: {
    vars?: (vars: WorkspaceVarRow[]) => WorkspaceVarRow[];
    configuration?: Partial<RunConfiguration>;
    autoApply?: boolean;
  } = {},
) {
  const ws = (await findWorkspace(db, workspaceId))!;
  const module = (await findNoCodeModule(db, ws.noCodeModuleId!))!;
  const version = (await findModuleVersionById(db, ws.noCodeVersionId!))!;
  const stored = await listWorkspaceVars(db, ws.id);
  const vars = options.vars ? options.vars(stored) : stored;
  const configuration = await buildRunConfiguration({
    noCodeModule: module,
    version,
    values: effectiveValues(versionSummary(version)!, vars),
    options: await listVariableOptions(db, module.id),
    storedVars: stored,
  });
  return createRun(db, {
    workspace: ws,
    kind: "plan-and-apply",
    configuration: { ...configuration, ...options.configuration },
    engineVersion: "1.9.0",
    autoApply: options.autoApply ?? false,
  });
}

async function stateVersionCount(workspaceId: string): Promise<number> {
  return (
    (
      await env.DB.prepare("SELECT count(*) AS n FROM state_versions WHERE workspace_id = ?")
        .bind(workspaceId)
        .first<{ n: number }>()
    )?.n ?? 0
  );
}

async function runStatus(runId: string): Promise<string> {
  return (await env.DB.prepare("SELECT status FROM runs WHERE id = ?").bind(runId).first<{ status: string }>())!.status;
}

describe("the first run of E4 (N7)", () => {
  it("with auto-apply ends `applied`: its plan lists the module's resources, the workspace records the state", async () => {
    const { workspace, runId } = await createNoCodeWorkspace(ctx.noCodeModuleId, ctx.ownerToken, {
      "auto-apply": true,
    });
    expect(runId).toMatch(/^run-[A-Za-z0-9]{16}$/);
    const run = await waitForRun(runId, ctx.ownerToken, ["applied", "errored"]);
    expect(run.attributes.status).toBe("applied");
    expect(Object.keys(run.attributes["status-timestamps"])).toEqual([
      "plan-queueable-at",
      "plan-queued-at",
      "planning-at",
      "planned-at",
      "confirmed-at",
      "apply-queued-at",
      "applying-at",
      "applied-at",
    ]);
    expect(run.attributes).toMatchObject({ "auto-apply": true, "has-changes": true, "is-destroy": false });
    expect(run.relationships.workspace.data).toEqual({ id: workspace.id, type: "workspaces" });

    const plan = await tfe("GET", `runs/${runId}/plan`, { token: ctx.ownerToken });
    expect(plan.status).toBe(200);
    expect(plan.json.data).toMatchObject({
      id: run.relationships.plan.data.id,
      type: "plans",
      attributes: {
        status: "finished",
        "has-changes": true,
        "resource-additions": 2,
        "resource-changes": 0,
        "resource-destructions": 0,
      },
    });
    const json = await jsonOutputOf(plan.json.data.id, ctx.ownerToken);
    expect(json.status).toBe(200);
    expect(
      json.json.resource_changes.map((c: { address: string; change: { actions: string[] } }) => [
        c.address,
        c.change.actions,
      ]),
    ).toEqual(PET_RESOURCES.map((a) => [a, ["create"]]));
    expect(json.json.resource_changes[1]).toMatchObject({
      address: "random_pet.name",
      mode: "managed",
      type: "random_pet",
      name: "name",
    });

    const ws = (await tfe("GET", `workspaces/${workspace.id}`, { token: ctx.ownerToken })).json.data;
    expect(ws.attributes["resource-count"]).toBe(2);
    expect(ws.relationships["latest-run"].data.id).toBe(runId);
    expect(ws.attributes["latest-change-at"]).toBe(run.attributes["status-timestamps"]["applied-at"]);
    const svId = ws.relationships["current-state-version"].data.id;
    expect(svId).toMatch(/^sv-[A-Za-z0-9]{16}$/);
    const sv = await tfe("GET", `state-versions/${svId}`, { token: ctx.ownerToken });
    expect(sv.json.data.attributes).toMatchObject({
      serial: 1,
      resources: PET_RESOURCES.map((address) => ({ address })),
      outputs: [{ name: "name", sensitive: false, value: null }],
    });
    expect(sv.json.data.relationships.run.data.id).toBe(runId);
  });

  it("without auto-apply waits at `planned` until the apply action (202), then applies", async () => {
    const { workspace, runId } = await plannedWorkspace();
    // It stays there: give the consumer time to (wrongly) move it on.
    await new Promise((r) => setTimeout(r, 300));
    const waiting = await tfe("GET", `runs/${runId}`, { token: ctx.ownerToken });
    expect(waiting.json.data.attributes.status).toBe("planned");
    expect(waiting.json.data.attributes.actions).toMatchObject({ "is-confirmable": true, "is-discardable": true });
    expect(await stateVersionCount(workspace.id)).toBe(0);
    const apply = await tfe("POST", `runs/${runId}/actions/apply`, {
      token: ctx.ownerToken,
      body: { comment: "ship it" },
    });
    expect(apply.status).toBe(202);
    expect(apply.text).toBe("");
    const run = await waitForRun(runId, ctx.ownerToken, ["applied", "errored"]);
    expect(run.attributes.status).toBe("applied");
    expect(run.attributes["status-timestamps"]["confirmed-at"]).toBeDefined();
    expect(await stateVersionCount(workspace.id)).toBe(1);
    // Applying again is a conflict.
    expect((await tfe("POST", `runs/${runId}/actions/apply`, { token: ctx.ownerToken })).status).toBe(409);
  });

  it("discard (202) ends a planned run as `discarded`; then apply is 409", async () => {
    const { workspace, runId } = await plannedWorkspace();
    const res = await tfe("POST", `runs/${runId}/actions/discard`, { token: ctx.ownerToken });
    expect(res.status).toBe(202);
    expect((await tfe("GET", `runs/${runId}`, { token: ctx.ownerToken })).json.data.attributes.status).toBe(
      "discarded",
    );
    const apply = await tfe("POST", `runs/${runId}/actions/apply`, { token: ctx.ownerToken });
    expect(apply.status).toBe(409);
    expect(apply.json.errors[0].detail).toBe("The run is discarded, not awaiting confirmation");
    expect(await stateVersionCount(workspace.id)).toBe(0);
  });
});

describe("later runs: the baseline is the last applied configuration (N7)", () => {
  it("nothing to change → `planned_and_finished`; a changed sensitive value updates only what references it", async () => {
    const { workspace, runId } = await createNoCodeWorkspace(
      ctx.noCodeModuleId,
      ctx.ownerToken,
      { "auto-apply": true },
      [varEntry("prefix", "pet"), varEntry("greeting", "hi", { sensitive: true })],
    );
    await waitForRun(runId, ctx.ownerToken, ["applied"]);

    const same = await pendingRun(workspace.id);
    expect(await enqueueRunPlan(env, db, same)).toBe(true);
    const finished = await waitForRun(same.id, ctx.ownerToken, ["planned_and_finished", "errored"]);
    expect(finished.attributes.status).toBe("planned_and_finished");
    expect(finished.attributes["has-changes"]).toBe(false);

    // Another greeting: the planner sees only a different keyed hash (N7, B2).
    const changed = await pendingRun(workspace.id, {
      vars: (vars) => vars.map((v) => (v.key === "greeting" ? { ...v, sensitiveHash: "0".repeat(64) } : v)),
    });
    await enqueueRunPlan(env, db, changed);
    await waitForRun(changed.id, ctx.ownerToken, ["planned"]);
    const plan = await tfe("GET", `runs/${changed.id}/plan`, { token: ctx.ownerToken });
    expect(plan.json.data.attributes).toMatchObject({
      "resource-additions": 0,
      "resource-changes": 1,
      "resource-destructions": 0,
    });
    const json = await jsonOutputOf(plan.json.data.id, ctx.ownerToken);
    expect(
      json.json.resource_changes.map((c: { address: string; change: { actions: string[] } }) => [
        c.address,
        c.change.actions,
      ]),
    ).toEqual([
      ["null_resource.greet", ["update"]],
      ["random_pet.name", ["no-op"]],
    ]);
  });
});

describe("idempotency by run id (N11)", () => {
  it("a redelivered apply message does not apply twice (sequential and concurrent deliveries)", async () => {
    const { workspace, runId } = await plannedWorkspace();
    // Confirm without sending, so only this test delivers the apply message.
    expect(await transitionRun(db, runId, ["planned"], ["confirmed", "apply_queued"], Date.now())).toBe(true);
    const first = await deliver([applyRunMessage(runId)]);
    expect(first.result.explicitAcks).toEqual(first.ids);
    expect(await runStatus(runId)).toBe("applied");
    const again = await deliver([applyRunMessage(runId), applyRunMessage(runId)], {}, PROVISION_QUEUE_NAME, 2);
    expect(again.result.explicitAcks).toEqual(again.ids);
    await Promise.all([deliver([applyRunMessage(runId)]), deliver([applyRunMessage(runId)])]);
    expect(await stateVersionCount(workspace.id)).toBe(1);
    const ws = (await tfe("GET", `workspaces/${workspace.id}`, { token: ctx.ownerToken })).json.data;
    expect(ws.attributes["resource-count"]).toBe(2);
    const sv = await env.DB.prepare("SELECT id, serial FROM state_versions WHERE workspace_id = ?")
      .bind(workspace.id)
      .first<{ id: string; serial: number }>();
    expect(ws.relationships["current-state-version"].data.id).toBe(sv?.id);
    expect(sv?.serial).toBe(1);
  });

  it("concurrent first deliveries of one apply record exactly one state version", async () => {
    const { workspace, runId } = await plannedWorkspace();
    await transitionRun(db, runId, ["planned"], ["confirmed", "apply_queued"], Date.now());
    await Promise.all([1, 2, 3].map(() => deliver([applyRunMessage(runId)])));
    expect(await runStatus(runId)).toBe("applied");
    expect(await stateVersionCount(workspace.id)).toBe(1);
  });

  it("a redelivered plan message does not plan again", async () => {
    const { runId } = await plannedWorkspace();
    const before = await env.DB.prepare("SELECT plan, status_timestamps FROM runs WHERE id = ?").bind(runId).first();
    const res = await deliver([planRunMessage(runId)], {
      planner: () => {
        throw new Error("must not plan again");
      },
    });
    expect(res.result.explicitAcks).toEqual(res.ids);
    expect(await env.DB.prepare("SELECT plan, status_timestamps FROM runs WHERE id = ?").bind(runId).first()).toEqual(
      before,
    );
    expect(await runStatus(runId)).toBe("planned");
  });
});

describe("a batch's plan messages are planned together (docs/performance.md)", () => {
  it("three pending runs take two D1 calls in all: their claims with baselines, then their plans", async () => {
    const workspaces = await Promise.all([plannedWorkspace(), plannedWorkspace(), plannedWorkspace()]);
    const pending = [];
    for (const { workspace } of workspaces) pending.push(await pendingRun(workspace.id));
    await summaryOfVersion(db, ctx.versionId); // the proposed version's summary, cached as the steady state has it
    const recording = recordD1Statements();
    let res: Awaited<ReturnType<typeof deliver>>;
    try {
      res = await deliver(pending.map((run) => planRunMessage(run.id)));
    } finally {
      recording.stop();
    }
    expect(res.result.explicitAcks).toEqual(res.ids);
    const shape = recording.calls.map((statements) =>
      statements.map((sql) => sql.trim().split(/\s+/)[0]?.toLowerCase()),
    );
    expect(shape).toEqual([
      ["update", "select", "update", "select", "update", "select"],
      ["update", "update", "update"],
    ]);
    for (const run of pending) {
      expect(await runStatus(run.id)).toBe("planned");
      const read = await tfe("GET", `runs/${run.id}`, { token: ctx.ownerToken });
      expect(Object.keys(read.json.data.attributes["status-timestamps"])).toEqual(
        expect.arrayContaining(["plan-queued-at", "planning-at", "planned-at"]),
      );
    }
  });

  it("mixed batch: auto-apply, a gone version, a duplicate, a finished run and an unknown run each get their own outcome", async () => {
    const [a, b] = await Promise.all([plannedWorkspace(), plannedWorkspace()]);
    const plain = await pendingRun(a.workspace.id);
    const gone = await pendingRun(a.workspace.id, { configuration: { moduleVersionId: "modver-BBBBBBBBBBBBBBBB" } });
    const auto = await pendingRun(b.workspace.id, { autoApply: true });
    const res = await deliver([
      planRunMessage(plain.id),
      planRunMessage(gone.id),
      planRunMessage(auto.id),
      planRunMessage(plain.id), // a duplicate delivery in the same batch
      planRunMessage(a.runId), // already planned
      planRunMessage("run-YYYYYYYYYYYYYYYY"),
    ]);
    expect(res.result.explicitAcks).toEqual(res.ids);
    expect(res.result.retryMessages).toEqual([]);
    expect(await runStatus(plain.id)).toBe("planned");
    expect(await runStatus(gone.id)).toBe("errored");
    expect(await runStatus(a.runId)).toBe("planned");
    const applied = await waitForRun(auto.id, ctx.ownerToken, ["applied", "errored"]);
    expect(applied.attributes.status).toBe("applied");
  });

  it("a planner fault retries only its own message; the batch's other runs are planned", async () => {
    const workspaces = await Promise.all([plannedWorkspace(), plannedWorkspace(), plannedWorkspace()]);
    const pending = [];
    for (const { workspace } of workspaces) pending.push(await pendingRun(workspace.id));
    let calls = 0;
    const res = await deliver(
      pending.map((run) => planRunMessage(run.id)),
      {
        planner: (input) => {
          calls += 1;
          if (calls === 2) throw new Error("injected fault");
          return planRun(input);
        },
      },
    );
    expect(res.result.retryMessages).toHaveLength(1);
    expect(res.result.explicitAcks).toHaveLength(2);
    const statuses = await Promise.all(pending.map((run) => runStatus(run.id)));
    expect(statuses.sort()).toEqual(["planned", "planned", "planning"]);
    const retriedIndex = res.ids.indexOf(res.result.retryMessages[0]!.msgId);
    expect(await runStatus(pending[retriedIndex]!.id)).toBe("planning");
  });
});

describe("faults (N11): transient ones retried with backoff, permanent ones end the run", () => {
  it("a planner fault is retried (2^attempts s); the redelivery finishes the plan from `planning`", async () => {
    const { workspace } = await plannedWorkspace();
    const run = await pendingRun(workspace.id);
    const failing = await deliver(
      [planRunMessage(run.id)],
      {
        planner: () => {
          throw new Error("injected fault");
        },
      },
      PROVISION_QUEUE_NAME,
      3,
    );
    expect(failing.result.explicitAcks).toEqual([]);
    expect(failing.result.retryMessages).toEqual([{ msgId: failing.ids[0] }]);
    expect(failing.delays[failing.ids[0]!]).toBe(8);
    expect(await runStatus(run.id)).toBe("planning");
    const retried = await deliver([planRunMessage(run.id)], {}, PROVISION_QUEUE_NAME, 4);
    expect(retried.result.explicitAcks).toEqual(retried.ids);
    expect(await runStatus(run.id)).toBe("planned");
  });

  it("a fault before the apply commits is retried; nothing is recorded until the redelivery applies once", async () => {
    const { workspace, runId } = await plannedWorkspace();
    await transitionRun(db, runId, ["planned"], ["confirmed", "apply_queued"], Date.now());
    const failing = await deliver([applyRunMessage(runId)], {
      beforeApplyCommit: async () => {
        throw new Error("injected D1 outage");
      },
    });
    expect(failing.result.retryMessages).toEqual([{ msgId: failing.ids[0] }]);
    expect(failing.delays[failing.ids[0]!]).toBe(2);
    expect(await runStatus(runId)).toBe("applying");
    expect(await stateVersionCount(workspace.id)).toBe(0);
    await deliver([applyRunMessage(runId)], {}, PROVISION_QUEUE_NAME, 2);
    expect(await runStatus(runId)).toBe("applied");
    expect(await stateVersionCount(workspace.id)).toBe(1);
  });

  it("if queueing the auto-apply fails, the redelivered plan message queues it again and the run applies", async () => {
    const { workspace } = await plannedWorkspace();
    const run = await pendingRun(workspace.id, { autoApply: true });
    const failing = await deliver([planRunMessage(run.id)], {
      send: async () => {
        throw new Error("queue unavailable");
      },
    });
    expect(failing.result.retryMessages).toEqual([{ msgId: failing.ids[0] }]);
    expect(await runStatus(run.id)).toBe("apply_queued");
    // Redelivery with the real queue: the apply is queued and the real consumer applies it.
    await deliver([planRunMessage(run.id)], {}, PROVISION_QUEUE_NAME, 2);
    const applied = await waitForRun(run.id, ctx.ownerToken, ["applied", "errored"]);
    expect(applied.attributes.status).toBe("applied");
    expect(await stateVersionCount(workspace.id)).toBe(1);
  });

  it("a permanent failure (the planned version is gone) marks the run errored and acknowledges", async () => {
    const { workspace } = await plannedWorkspace();
    const run = await pendingRun(workspace.id, { configuration: { moduleVersionId: "modver-AAAAAAAAAAAAAAAA" } });
    const res = await deliver([planRunMessage(run.id)]);
    expect(res.result.explicitAcks).toEqual(res.ids);
    const read = await tfe("GET", `runs/${run.id}`, { token: ctx.ownerToken });
    expect(read.json.data.attributes.status).toBe("errored");
    expect(read.json.data.attributes["error-message"]).toBe(
      "module version modver-AAAAAAAAAAAAAAAA is no longer available",
    );
    expect(read.json.data.attributes["status-timestamps"]["errored-at"]).toBeDefined();
  });

  it("poison messages are acknowledged, never retried: malformed bodies and unknown runs", async () => {
    const res = await deliver([
      { v: 1, kind: "plan-run", runId: "not-a-run-id" },
      { v: 2, kind: "apply-run", runId: "run-AAAAAAAAAAAAAAAA" },
      { v: 1, kind: "apply-run" },
      planRunMessage("run-ZZZZZZZZZZZZZZZZ"),
      applyRunMessage("run-ZZZZZZZZZZZZZZZZ"),
    ]);
    expect(res.result.explicitAcks.sort()).toEqual([...res.ids].sort());
    expect(res.result.retryMessages).toEqual([]);
  });

  it("the dead-letter consumer marks a run `errored`, and leaves finished runs alone", async () => {
    const { workspace, runId } = await plannedWorkspace();
    const stuck = await pendingRun(workspace.id);
    await deliver([planRunMessage(stuck.id)], {
      planner: () => {
        throw new Error("keeps failing");
      },
    });
    expect(await runStatus(stuck.id)).toBe("planning");
    const dlq = await deliver([planRunMessage(stuck.id), applyRunMessage(runId)], {}, PROVISION_DLQ_NAME);
    expect(dlq.result.explicitAcks.sort()).toEqual([...dlq.ids].sort());
    const read = await tfe("GET", `runs/${stuck.id}`, { token: ctx.ownerToken });
    expect(read.json.data.attributes.status).toBe("errored");
    expect(read.json.data.attributes["error-message"]).toBe(RUN_GAVE_UP);
    // A run waiting at `planned` for a person is not the apply step's to give up on.
    expect(await runStatus(runId)).toBe("planned");
    await transitionRun(db, runId, ["planned"], ["confirmed", "apply_queued"], Date.now());
    await deliver([applyRunMessage(runId)], {
      beforeApplyCommit: async () => {
        throw new Error("keeps failing");
      },
    });
    expect(await runStatus(runId)).toBe("applying");
    await deliver([applyRunMessage(runId)], {}, PROVISION_DLQ_NAME);
    expect(await runStatus(runId)).toBe("errored");
    expect(await stateVersionCount(workspace.id)).toBe(0);
    // A finished run stays as it is.
    const { runId: appliedId } = await createNoCodeWorkspace(ctx.noCodeModuleId, ctx.ownerToken, {
      "auto-apply": true,
    });
    await waitForRun(appliedId, ctx.ownerToken, ["applied"]);
    await deliver([applyRunMessage(appliedId)], {}, PROVISION_DLQ_NAME);
    expect(await runStatus(appliedId)).toBe("applied");
  });
});

describe("a user's lock holds a remote workspace's queued runs (N20)", () => {
  it("the consumer keeps a pending run in plan_queued while locked; unlocking plans it; E5 is 409 while locked", async () => {
    const { workspace, runId } = await plannedWorkspace();
    expect((await tfe("POST", `runs/${runId}/actions/discard`, { token: ctx.ownerToken })).status).toBe(202);
    expect((await tfe("POST", `workspaces/${workspace.id}/actions/lock`, { token: ctx.ownerToken })).status).toBe(200);
    const run = await pendingRun(workspace.id);
    const held = await deliver([planRunMessage(run.id)]);
    expect(held.result.explicitAcks).toContain(held.ids[0]);
    expect(await runStatus(run.id)).toBe("plan_queued");
    // A redelivery finds it queued and still holds it.
    await deliver([planRunMessage(run.id)]);
    expect(await runStatus(run.id)).toBe("plan_queued");
    const e5 = await tfe("POST", `no-code-modules/${ctx.noCodeModuleId}/workspaces/${workspace.id}/upgrade`, {
      token: ctx.ownerToken,
      body: { data: { type: "workspaces", attributes: {}, relationships: { vars: { data: [] } } } },
    });
    expect(e5.status).toBe(409);
    expect(e5.json.errors[0].detail).toContain("locked");
    // Unlocking sends its plan message again: the run is planned.
    expect((await tfe("POST", `workspaces/${workspace.id}/actions/unlock`, { token: ctx.ownerToken })).status).toBe(
      200,
    );
    await waitForRun(run.id, ctx.ownerToken, ["planned", "planned_and_finished"]);
  });
});

describe("run and plan reads, run actions (N7, N10)", () => {
  it("a pending run's plan is `pending` and its JSON output is 204 until planned", async () => {
    const { workspace } = await plannedWorkspace();
    const run = await pendingRun(workspace.id);
    const plan = await tfe("GET", `plans/${run.planId}`, { token: ctx.ownerToken });
    expect(plan.status).toBe(200);
    expect(plan.json.data.attributes).toMatchObject({
      status: "pending",
      "has-changes": false,
      "resource-additions": 0,
    });
    // N20: 204 until the plan finishes (N7 answered 409).
    expect((await jsonOutputOf(run.planId, ctx.ownerToken)).status).toBe(204);
    const read = await tfe("GET", `runs/${run.id}`, { token: ctx.ownerToken });
    expect(read.json.data.attributes).toMatchObject({
      status: "pending",
      "terraform-version": "1.9.0",
      "engine-version": "1.9.0",
    });
  });

  it("lists a workspace's runs newest first", async () => {
    const { workspace, runId } = await plannedWorkspace();
    const second = await pendingRun(workspace.id);
    const list = await tfe("GET", `workspaces/${workspace.id}/runs`, { token: ctx.ownerToken });
    expect(list.status).toBe(200);
    expect(list.json.data.map((r: { id: string }) => r.id)).toEqual([second.id, runId]);
    expect(list.json.meta.pagination["total-count"]).toBe(2);
  });

  it("readers read runs and plans; run actions need manage-workspaces and refuse the organization token (404)", async () => {
    const { runId } = await plannedWorkspace();
    const reader = await createMember(ctx.org, { "read-workspaces": true });
    const orgToken = await createOrgToken(ctx.org);
    for (const token of [reader.token, orgToken]) {
      const run = await tfe("GET", `runs/${runId}`, { token });
      expect(run.status).toBe(200);
      expect(run.json.data.attributes.permissions["can-apply"]).toBe(false);
      expect((await tfe("GET", `runs/${runId}/plan`, { token })).status).toBe(200);
      for (const action of ["apply", "discard"]) {
        const res = await tfe("POST", `runs/${runId}/actions/${action}`, { token });
        expect(res.status).toBe(404);
        expect(res.json).toEqual({ errors: [{ status: "404", title: "not found" }] });
      }
    }
    expect(await runStatus(runId)).toBe("planned");
    const member = await createMember(ctx.org, {});
    for (const token of [member.token, ADMIN, (await bootstrapOrg()).ownerToken]) {
      expect((await tfe("GET", `runs/${runId}`, { token })).status).toBe(404);
    }
    const manager = await createMember(ctx.org, { "manage-workspaces": true });
    expect(
      (await tfe("GET", `runs/${runId}`, { token: manager.token })).json.data.attributes.permissions["can-apply"],
    ).toBe(true);
    expect((await tfe("POST", `runs/${runId}/actions/discard`, { token: manager.token })).status).toBe(202);
  });

  it("unknown runs and plans are 404", async () => {
    for (const path of [
      "runs/run-AAAAAAAAAAAAAAAA",
      "runs/run-AAAAAAAAAAAAAAAA/plan",
      "plans/plan-AAAAAAAAAAAAAAAA",
      "plans/plan-AAAAAAAAAAAAAAAA/json-output",
    ]) {
      expect((await tfe("GET", path, { token: ctx.ownerToken })).status).toBe(404);
    }
    expect((await tfe("POST", "runs/run-AAAAAAAAAAAAAAAA/actions/apply", { token: ctx.ownerToken })).status).toBe(404);
  });
});
