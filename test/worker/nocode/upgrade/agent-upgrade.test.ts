/**
 * E5–E7 on an agent workspace (decisions N8, N18, N19, N19a), with a protocol-level agent:
 * E5 answers `pending` and queues a plan job carrying the upgrade's version and variables;
 * E6 maps the run's statuses (`plan_queued` reads `pending`); E7 confirms only a `planned`
 * run and sends the apply job; `actions/discard` of a run still queued cancels it with its
 * job; N8's staleness counts from the moment the run reached `planned`.
 */
import { beforeAll, describe, expect, it } from "vitest";
import {
  type AgentSession,
  agentCall,
  createAgentToken,
  createPool,
  jsonPlanCreating,
  registerAgent,
  stateWith,
} from "../../../helpers/agents";
import { ConsoleBrowser } from "../../../helpers/console-browser";
import { tfe } from "../../../helpers/nocode";
import { createNoCodeWorkspace, varEntry, waitForRun } from "../../../helpers/nocode-modules";
import { rolloutDriver } from "../../../helpers/rollouts";
import { md5Hex } from "../state-versions/run-data-helpers";
import {
  e5,
  e6,
  e7,
  FIRST_PASSWORD,
  patchModule,
  UPGRADE_TEST_TIMEOUT,
  type UpgradeModule,
  upgradeModule,
  waitForUpgrade,
  workspaceAttributes,
} from "./upgrade-helpers";

let ctx: UpgradeModule;
let poolId: string;
let poolToken: string;
/** The test's agent, registered with the engine version of the first workspace. */
let session: AgentSession | undefined;
const LINEAGE = "lineage-agent-upgrade";

beforeAll(async () => {
  ctx = await upgradeModule();
  poolId = await createPool(ctx);
  poolToken = (await createAgentToken(poolId, ctx.ownerToken)).token;
}, UPGRADE_TEST_TIMEOUT);

/**
 * The next job of `runId` and `phase` for the test's agent, started. Jobs of other runs
 * (a run canceled while queued lingers in the pool until an agent tries it) are tried and
 * refused (409).
 */
async function startJob(runId: string, phase: "plan" | "apply") {
  if (!session) throw new Error("no agent registered");
  for (let attempt = 0; attempt < 20; attempt++) {
    const polled = await agentCall("GET", "jobs/next?wait=5", { session });
    if (polled.status !== 200) continue;
    const job = polled.json.job;
    const started = await agentCall("POST", `jobs/${job.id}/start`, { session });
    if (job["run-id"] !== runId || job.phase !== phase) {
      expect(started.status, `a stray job of ${job["run-id"]}`).toBe(409);
      continue;
    }
    expect(started.status, started.text).toBe(200);
    return { jobId: job.id as string, token: started.json["job-token"] as string };
  }
  throw new Error(`no ${phase} job of ${runId} reached the agent`);
}

/** Plan a started plan job with `plan` and finish it. */
async function finishPlan(job: { jobId: string; token: string }, plan: unknown) {
  const jp = await agentCall("PUT", `jobs/${job.jobId}/json-plan`, { token: job.token, rawBody: JSON.stringify(plan) });
  expect(jp.status, jp.text).toBe(204);
  const done = await agentCall("POST", `jobs/${job.jobId}/finish`, { token: job.token, body: { status: "finished" } });
  expect(done.status, done.text).toBe(200);
}

/** Apply a started apply job with `state` and finish it. */
async function finishApply(job: { jobId: string; token: string }, state: unknown) {
  const up = await agentCall("PUT", `jobs/${job.jobId}/state`, { token: job.token, rawBody: JSON.stringify(state) });
  expect(up.status, up.text).toBe(200);
  const done = await agentCall("POST", `jobs/${job.jobId}/finish`, { token: job.token, body: { status: "finished" } });
  expect(done.status, done.text).toBe(200);
}

const ADDRESSES = ["random_pet.name", "random_string.suffix"];

/**
 * An agent workspace created at 1.0.0 whose first run the agent planned and applied (state
 * serial 1), the pin then at 1.1.0; the first call registers the agent with the
 * workspace's engine version.
 */
async function appliedWorkspace() {
  await patchModule(ctx, { "version-pin": "1.0.0" });
  const { workspace, runId } = await createNoCodeWorkspace(
    ctx.noCodeModuleId,
    ctx.ownerToken,
    { "execution-mode": "agent", "agent-pool-id": poolId, "auto-apply": true },
    [varEntry("db_password", FIRST_PASSWORD, { sensitive: true }), varEntry("prefix", "first")],
  );
  const attrs = await workspaceAttributes(workspace.id, ctx.ownerToken);
  const engineVersion = attrs.attributes["terraform-version"] as string;
  session ??= await registerAgent(poolToken, engineVersion, "upgrade-agent");
  await patchModule(ctx, { "version-pin": "1.1.0" });
  await finishPlan(await startJob(runId, "plan"), jsonPlanCreating(ADDRESSES));
  await waitForRun(runId, ctx.ownerToken, ["apply_queued"]);
  await finishApply(await startJob(runId, "apply"), stateWith(1, LINEAGE, ADDRESSES));
  await waitForRun(runId, ctx.ownerToken, ["applied"]);
  return { workspaceId: workspace.id as string, firstRunId: runId };
}

/** A JSON plan that updates `random_string.suffix` in place and leaves the rest. */
const updatingPlan = {
  ...jsonPlanCreating(ADDRESSES),
  resource_changes: ADDRESSES.map((address) => ({
    address,
    mode: "managed",
    type: address.split(".")[0],
    name: address.split(".")[1],
    change: {
      actions: address === "random_string.suffix" ? ["update"] : ["no-op"],
      before: {},
      after: {},
      after_unknown: {},
    },
  })),
};

describe("E5–E7 on an agent workspace (N19)", () => {
  it(
    "E5 → pending; E6 pending → planning → planned; E7 → the apply job; applied with serial + 1",
    async () => {
      const { workspaceId } = await appliedWorkspace();
      const started = await e5(ctx.noCodeModuleId, workspaceId, ctx.ownerToken, [varEntry("prefix", "upgraded")]);
      expect(started.status, started.text).toBe(200);
      expect(started.json.data.attributes.status).toBe("pending");
      expect(started.json.data.attributes["plan-url"]).toMatch(/^http:\/\/keyway\.test\/app\//);
      const runId = started.json.data.id as string;
      // The run itself is HCP's plan_queued; E6 reads pending (N19).
      expect((await tfe("GET", `runs/${runId}`, { token: ctx.ownerToken })).json.data.attributes.status).toBe(
        "plan_queued",
      );
      expect((await e6(ctx.noCodeModuleId, workspaceId, runId, ctx.ownerToken)).json.data.attributes.status).toBe(
        "pending",
      );
      // E7 before the plan: not awaiting confirmation.
      expect((await e7(ctx.noCodeModuleId, workspaceId, runId, ctx.ownerToken)).status).toBe(409);

      const plan = await startJob(runId, "plan");
      expect((await e6(ctx.noCodeModuleId, workspaceId, runId, ctx.ownerToken)).json.data.attributes.status).toBe(
        "planning",
      );
      // N18: the upgrade's pending variables (E5's new value, the sensitive one decrypted), not the workspace's.
      const inputs = await agentCall("GET", `jobs/${plan.jobId}/inputs`, { token: plan.token });
      expect(inputs.json["terraform-variables"]).toEqual(
        expect.arrayContaining([
          { key: "prefix", value: "upgraded", hcl: false, sensitive: false },
          { key: "db_password", value: FIRST_PASSWORD, hcl: false, sensitive: true },
        ]),
      );
      const vars = await tfe("GET", `workspaces/${workspaceId}/vars`, { token: ctx.ownerToken });
      expect(
        vars.json.data.find((v: { attributes: { key: string } }) => v.attributes.key === "prefix").attributes.value,
      ).toBe("first");
      // The configuration is the version recorded on the run (1.1.0), whatever the pin does next.
      const config = await agentCall("GET", `jobs/${plan.jobId}/configuration`, { token: plan.token });
      expect(config.status).toBe(200);
      const state = await agentCall("GET", `jobs/${plan.jobId}/state`, { token: plan.token });
      expect(JSON.parse(state.text)).toMatchObject({ serial: 1, lineage: LINEAGE });
      await finishPlan(plan, updatingPlan);

      const planned = await waitForUpgrade(ctx.noCodeModuleId, workspaceId, runId, ctx.ownerToken, ["planned"]);
      expect(planned.attributes.status).toBe("planned");
      const planDoc = await tfe("GET", `runs/${runId}/plan`, { token: ctx.ownerToken });
      expect(planDoc.json.data.attributes).toMatchObject({
        "resource-additions": 0,
        "resource-changes": 1,
        "resource-destructions": 0,
      });

      const confirmed = await e7(ctx.noCodeModuleId, workspaceId, runId, ctx.ownerToken);
      expect(confirmed.status, confirmed.text).toBe(200);
      expect(confirmed.text).toBe("Workspace update completed");
      const ws = await workspaceAttributes(workspaceId, ctx.ownerToken);
      // E7 switched the workspace to the pin at once (N8).
      expect(ws.attributes["no-code-upgrade-available"]).toBe(false);
      const apply = await startJob(runId, "apply");
      expect((await e6(ctx.noCodeModuleId, workspaceId, runId, ctx.ownerToken)).json.data.attributes.status).toBe(
        "applying",
      );
      await finishApply(apply, stateWith(2, LINEAGE, ADDRESSES));
      await waitForUpgrade(ctx.noCodeModuleId, workspaceId, runId, ctx.ownerToken, ["applied"]);
      const current = await tfe("GET", `workspaces/${workspaceId}/current-state-version`, { token: ctx.ownerToken });
      expect(current.json.data.attributes.serial).toBe(2);
      const after = await tfe("GET", `workspaces/${workspaceId}/vars`, { token: ctx.ownerToken });
      expect(
        after.json.data.find((v: { attributes: { key: string } }) => v.attributes.key === "prefix").attributes.value,
      ).toBe("upgraded");
    },
    UPGRADE_TEST_TIMEOUT,
  );

  it(
    "actions/discard of a queued upgrade run cancels it and its job (N19a); of a planned one discards it",
    async () => {
      const { workspaceId } = await appliedWorkspace();
      const first = await e5(ctx.noCodeModuleId, workspaceId, ctx.ownerToken);
      const queuedRun = first.json.data.id as string;
      const discard = await tfe("POST", `runs/${queuedRun}/actions/discard`, { token: ctx.ownerToken });
      expect(discard.status, discard.text).toBe(202);
      expect((await e6(ctx.noCodeModuleId, workspaceId, queuedRun, ctx.ownerToken)).json.data.attributes.status).toBe(
        "canceled",
      );
      // Its job is never started: the agent is refused it and gets the next run's job.
      const second = await e5(ctx.noCodeModuleId, workspaceId, ctx.ownerToken);
      expect(second.status, second.text).toBe(200);
      const runId = second.json.data.id as string;
      await finishPlan(await startJob(runId, "plan"), updatingPlan);
      await waitForUpgrade(ctx.noCodeModuleId, workspaceId, runId, ctx.ownerToken, ["planned"]);
      // Now planning is over: discard means discard, and a second discard is refused.
      expect((await tfe("POST", `runs/${runId}/actions/discard`, { token: ctx.ownerToken })).status).toBe(202);
      expect((await e6(ctx.noCodeModuleId, workspaceId, runId, ctx.ownerToken)).json.data.attributes.status).toBe(
        "discarded",
      );
      expect((await tfe("POST", `runs/${runId}/actions/discard`, { token: ctx.ownerToken })).status).toBe(409);
      // The canceled run's pending variable changes went with it.
      expect((await e7(ctx.noCodeModuleId, workspaceId, queuedRun, ctx.ownerToken)).status).toBe(409);
    },
    UPGRADE_TEST_TIMEOUT,
  );

  it(
    "a discard while an agent plans means cancel (N19a): 202, and the plan the agent still finishes ends the run canceled",
    async () => {
      const { workspaceId } = await appliedWorkspace();
      const started = await e5(ctx.noCodeModuleId, workspaceId, ctx.ownerToken);
      const runId = started.json.data.id as string;
      const plan = await startJob(runId, "plan");
      expect((await tfe("POST", `runs/${runId}/actions/discard`, { token: ctx.ownerToken })).status).toBe(202);
      const asked = await tfe("GET", `runs/${runId}`, { token: ctx.ownerToken });
      expect(asked.json.data.attributes.status).toBe("planning");
      expect(
        asked.json.data.attributes["is-force-cancelable"] ?? asked.json.data.attributes["force-cancel-available-at"],
      ).toBeTruthy();
      await finishPlan(plan, updatingPlan);
      await waitForUpgrade(ctx.noCodeModuleId, workspaceId, runId, ctx.ownerToken, ["canceled"]);
      expect((await tfe("POST", `runs/${runId}/actions/discard`, { token: ctx.ownerToken })).status).toBe(409);
    },
    UPGRADE_TEST_TIMEOUT,
  );

  it(
    "N8's staleness counts from planned: a state recorded while the run waited is in the plan; a var change after E5 is not",
    async () => {
      const { workspaceId } = await appliedWorkspace();
      // A user's lock keeps the upgrade run queued (N20); the owner records a state meanwhile.
      expect((await tfe("POST", `workspaces/${workspaceId}/actions/lock`, { token: ctx.ownerToken })).status).toBe(200);
      const started = await e5(ctx.noCodeModuleId, workspaceId, ctx.ownerToken);
      expect(started.status, started.text).toBe(200);
      const runId = started.json.data.id as string;
      const bytes = new TextEncoder().encode(JSON.stringify(stateWith(2, LINEAGE, ADDRESSES)));
      const uploaded = await tfe("POST", `workspaces/${workspaceId}/state-versions`, {
        token: ctx.ownerToken,
        body: {
          data: {
            type: "state-versions",
            attributes: {
              serial: 2,
              lineage: LINEAGE,
              md5: await md5Hex(bytes),
              state: btoa(String.fromCharCode(...bytes)),
            },
          },
        },
      });
      expect(uploaded.status, uploaded.text).toBe(201);
      expect((await tfe("POST", `workspaces/${workspaceId}/actions/unlock`, { token: ctx.ownerToken })).status).toBe(
        200,
      );
      const plan = await startJob(runId, "plan");
      const handed = await agentCall("GET", `jobs/${plan.jobId}/state`, { token: plan.token });
      expect(JSON.parse(handed.text)).toMatchObject({ serial: 2 });
      await finishPlan(plan, updatingPlan);
      await waitForUpgrade(ctx.noCodeModuleId, workspaceId, runId, ctx.ownerToken, ["planned"]);
      // The state recorded before `planned` does not make the plan stale: E7 confirms it.
      const confirmed = await e7(ctx.noCodeModuleId, workspaceId, runId, ctx.ownerToken);
      expect(confirmed.status, confirmed.text).toBe(200);
      await finishApply(await startJob(runId, "apply"), stateWith(3, LINEAGE, ADDRESSES));
      await waitForUpgrade(ctx.noCodeModuleId, workspaceId, runId, ctx.ownerToken, ["applied"]);

      // A variable written after E5 (here while the agent plans) makes the plan stale.
      await patchModule(ctx, { "version-pin": "1.0.0" });
      const back = await e5(ctx.noCodeModuleId, workspaceId, ctx.ownerToken);
      expect(back.status, back.text).toBe(200);
      const backRun = back.json.data.id as string;
      const job = await startJob(backRun, "plan");
      const vars = await tfe("GET", `workspaces/${workspaceId}/vars`, { token: ctx.ownerToken });
      const prefix = vars.json.data.find((v: { attributes: { key: string } }) => v.attributes.key === "prefix");
      const patched = await tfe("PATCH", `workspaces/${workspaceId}/vars/${prefix.id}`, {
        token: ctx.ownerToken,
        body: { data: { id: prefix.id, type: "vars", attributes: { value: "changed-while-planning" } } },
      });
      expect(patched.status, patched.text).toBe(200);
      await finishPlan(job, updatingPlan);
      await waitForUpgrade(ctx.noCodeModuleId, workspaceId, backRun, ctx.ownerToken, ["planned"]);
      const stale = await e7(ctx.noCodeModuleId, workspaceId, backRun, ctx.ownerToken);
      expect(stale.status).toBe(409);
      expect(stale.json.errors[0].detail).toContain("a workspace variable changed");
      // E5 discards the stale plan and queues a fresh one.
      const again = await e5(ctx.noCodeModuleId, workspaceId, ctx.ownerToken);
      expect(again.status, again.text).toBe(200);
      expect(again.json.data.attributes.status).toBe("pending");
      expect((await tfe("GET", `runs/${backRun}`, { token: ctx.ownerToken })).json.data.attributes.status).toBe(
        "discarded",
      );
      // A queued run made stale (a var written) before it is planned: E5 cancels it (N19a).
      const rewritten = await tfe("PATCH", `workspaces/${workspaceId}/vars/${prefix.id}`, {
        token: ctx.ownerToken,
        body: { data: { id: prefix.id, type: "vars", attributes: { value: "changed-while-queued" } } },
      });
      expect(rewritten.status, rewritten.text).toBe(200);
      const fresh = await e5(ctx.noCodeModuleId, workspaceId, ctx.ownerToken);
      expect(fresh.status, fresh.text).toBe(200);
      expect(fresh.json.data.attributes.status).toBe("pending");
      expect(
        (await tfe("GET", `runs/${again.json.data.id}`, { token: ctx.ownerToken })).json.data.attributes.status,
      ).toBe("canceled");
      await tfe("POST", `runs/${fresh.json.data.id}/actions/discard`, { token: ctx.ownerToken });
    },
    UPGRADE_TEST_TIMEOUT,
  );
});

/** A console page as the owner sees it (signed in with a session, N14). */
async function consolePage(path: string): Promise<string> {
  const browser = new ConsoleBrowser();
  expect((await browser.signIn(ctx.ownerToken)).status).toBe(303);
  const page = await browser.get(path);
  expect(page.status).toBe(200);
  return page.text;
}

describe("rollouts of agent workspaces (N15, N19)", () => {
  const { newRollout, waitRolloutUntil, action } = rolloutDriver(() => ctx);

  it(
    "a batch waits on the agents' plans, shows the runs waiting for an agent, and judges auto-confirm on the real counts",
    async () => {
      const [a, b] = [await appliedWorkspace(), await appliedWorkspace()];
      const id = await newRollout({ "batch-size": 2, "auto-confirm": "no-changes" }, [a.workspaceId, b.workspaceId]);
      // Both runs queued for an agent: the items are still planning and say why.
      const waiting = await waitRolloutUntil(id, (d) =>
        d.attributes.items.every((i: { run: string | null }) => i.run !== null),
      );
      expect(waiting.attributes.status).toBe("running");
      for (const item of waiting.attributes.items) {
        expect(item.status).toBe("planning");
        expect(item.reason).toMatch(/^waiting for an agent of pool /);
      }
      // The console's rollout page shows them waiting, and counts them.
      const page = await consolePage(`/app/${ctx.org}/rollouts/${id}`);
      expect(page).toContain("Waiting for 2 plan(s) by an agent");
      expect(page).toContain("waiting for an agent of pool ");
      const runOf = (ws: string) =>
        waiting.attributes.items.find((i: { workspace: string }) => i.workspace === ws).run as string;
      // a: no changes → confirmed by the gate and applied; b: a change → waits for confirmation.
      await finishPlan(await startJob(runOf(a.workspaceId), "plan"), {
        ...updatingPlan,
        resource_changes: updatingPlan.resource_changes.map((c) => ({
          ...c,
          change: { ...c.change, actions: ["no-op"] },
        })),
      });
      await finishPlan(await startJob(runOf(b.workspaceId), "plan"), updatingPlan);
      await finishApply(await startJob(runOf(a.workspaceId), "apply"), stateWith(2, LINEAGE, ADDRESSES));
      const settled = await waitRolloutUntil(
        id,
        (d) =>
          d.attributes.status === "waiting-confirmation" &&
          d.attributes.items.some((i: { status: string }) => i.status === "applied"),
      );
      const byWs = (ws: string) => settled.attributes.items.find((i: { workspace: string }) => i.workspace === ws);
      expect(byWs(a.workspaceId)).toMatchObject({ status: "applied", "resource-changes": 0 });
      expect(byWs(b.workspaceId)).toMatchObject({ status: "waiting-confirmation", "resource-changes": 1 });
      // Cancel discards the plan that waits.
      expect((await action(id, "cancel")).status).toBe(202);
      expect(
        (await tfe("GET", `runs/${runOf(b.workspaceId)}`, { token: ctx.ownerToken })).json.data.attributes.status,
      ).toBe("discarded");
    },
    UPGRADE_TEST_TIMEOUT,
  );

  it(
    "canceling a rollout cancels its runs still queued for an agent (N19a), and their jobs never start",
    async () => {
      const c = await appliedWorkspace();
      const id = await newRollout({ "batch-size": 1 }, [c.workspaceId]);
      const queued = await waitRolloutUntil(id, (d) => d.attributes.items[0].run !== null);
      const runId = queued.attributes.items[0].run as string;
      expect((await action(id, "cancel")).status).toBe(202);
      expect((await tfe("GET", `runs/${runId}`, { token: ctx.ownerToken })).json.data.attributes.status).toBe(
        "canceled",
      );
      const ended = await waitRolloutUntil(id, (d) => d.attributes.status === "canceled");
      expect(ended.attributes.items[0]).toMatchObject({ status: "canceled", reason: "the rollout was canceled" });
      // The job lingering in the pool is refused to the agent.
      const polled = await agentCall("GET", "jobs/next?wait=1", { session });
      if (polled.status === 200) {
        expect(polled.json.job["run-id"]).toBe(runId);
        expect((await agentCall("POST", `jobs/${polled.json.job.id}/start`, { session })).status).toBe(409);
      }
    },
    UPGRADE_TEST_TIMEOUT,
  );
});
