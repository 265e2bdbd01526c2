/**
 * Cancel and force-cancel (decision N19a) through `POST /runs/:id/actions/cancel|force-cancel`
 * with a protocol-level agent: 202 in every cancelable status and 409 (HCP's error document)
 * in every other; the rights (manage-workspaces users and teams; a read-only team and the
 * organization token get 404); a queued run canceled at once, its job gone from the pool's
 * queue; a running job signalled `cancel` in the next ping answer and the run ending
 * `canceled` when the agent finishes it so; force-cancel refused until
 * KEYWAY_FORCE_CANCEL_AFTER_SECONDS (default 60) after the cancel, then the run `canceled`,
 * the lock released, the job token good for the state upload only, and `force-cancel` in
 * the ping answer. The wait is shortened by moving the recorded cancel back in D1.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import type { AgentPool } from "../../../../src/nocode/agents/pool-object";
import { poolStub } from "../../../../src/nocode/agents/pool-stub";
import { forceCancelAfterMs } from "../../../../src/nocode/runs/cancel";
import {
  type AgentSession,
  agentCall,
  createAgentToken,
  createAgentWorkspace,
  createPool,
  jsonPlanCreating,
  registerAgent,
  stateWith,
} from "../../../helpers/agents";
import { tfe, type WorkspaceRightsTokens, workspaceRightsTokens } from "../../../helpers/nocode";
import { createNoCodeWorkspace, type NoCodeOrg, noCodeOrg, waitForRun } from "../../../helpers/nocode-modules";

let ctx: NoCodeOrg;
let tokens: WorkspaceRightsTokens;

beforeAll(async () => {
  ctx = await noCodeOrg();
  tokens = await workspaceRightsTokens(ctx.org);
}, 60_000);

const act = (runId: string, action: "cancel" | "force-cancel", token = ctx.ownerToken) =>
  tfe("POST", `runs/${runId}/actions/${action}`, { token });

const runOf = async (runId: string) => (await tfe("GET", `runs/${runId}`, { token: ctx.ownerToken })).json.data;

/** An agent workspace in a pool of its own whose first run waits in plan_queued (no agent yet). */
async function queuedRun() {
  const poolId = await createPool(ctx);
  const poolToken = (await createAgentToken(poolId, ctx.ownerToken)).token;
  const { workspace, runId } = await createAgentWorkspace(ctx, poolId);
  const ws = await tfe("GET", `workspaces/${workspace.id}`, { token: ctx.ownerToken });
  return { poolId, poolToken, workspaceId: workspace.id, runId, engine: ws.json.data.attributes["terraform-version"] };
}

/** A queued run whose plan job an agent started (the run is `planning`). */
async function planningRun() {
  const queued = await queuedRun();
  const session = await registerAgent(queued.poolToken, queued.engine);
  const polled = await agentCall("GET", "jobs/next?wait=5", { session });
  const jobId = polled.json.job.id as string;
  const started = await agentCall("POST", `jobs/${jobId}/start`, { session });
  expect(started.status).toBe(200);
  return { ...queued, session, jobId, jobToken: started.json["job-token"] as string };
}

/** Plan (finished, with changes) and confirm: the run is `apply_queued`; `start` its apply job too when asked. */
async function applyRun(startApply: boolean) {
  const planning = await planningRun();
  const { jobId, jobToken, session, runId } = planning;
  const plan = JSON.stringify(jsonPlanCreating(["terraform_data.a"]));
  expect((await agentCall("PUT", `jobs/${jobId}/json-plan`, { token: jobToken, rawBody: plan })).status).toBe(204);
  expect(
    (await agentCall("POST", `jobs/${jobId}/finish`, { token: jobToken, body: { status: "finished" } })).status,
  ).toBe(200);
  await waitForRun(runId, ctx.ownerToken, ["planned"]);
  expect((await tfe("POST", `runs/${runId}/actions/apply`, { token: ctx.ownerToken })).status).toBe(202);
  if (!startApply) return { ...planning, applyJobId: null, applyToken: null };
  const polled = await agentCall("GET", "jobs/next?wait=10", { session });
  expect(polled.json.job).toMatchObject({ "run-id": runId, phase: "apply" });
  const applyJobId = polled.json.job.id as string;
  const started = await agentCall("POST", `jobs/${applyJobId}/start`, { session });
  expect(started.status).toBe(200);
  expect((await runOf(runId)).attributes.status).toBe("applying");
  return { ...planning, applyJobId, applyToken: started.json["job-token"] as string };
}

const ping = (session: AgentSession, status = "busy") => agentCall("POST", "ping", { session, body: { status } });

/** Move a run's recorded cancel `ms` into the past (N19a's wait before a force-cancel). */
async function askedAgo(runId: string, ms: number) {
  await env.DB.prepare("UPDATE runs SET cancel_requested_at = ? WHERE id = ?")
    .bind(Date.now() - ms, runId)
    .run();
}

describe("cancel and force-cancel: statuses and rights (N19a)", () => {
  it("the force-cancel wait defaults to 60 s, in code and in wrangler.jsonc's vars (KEYWAY_FORCE_CANCEL_AFTER_SECONDS)", () => {
    expect(forceCancelAfterMs({})).toBe(60_000);
    expect(forceCancelAfterMs(env)).toBe(60_000);
    expect(forceCancelAfterMs({ KEYWAY_FORCE_CANCEL_AFTER_SECONDS: "soon" })).toBe(60_000);
    expect(forceCancelAfterMs({ KEYWAY_FORCE_CANCEL_AFTER_SECONDS: "3" })).toBe(3_000);
  });

  it("a read-only team and the organization token get 404; a manage-workspaces user or team may cancel", async () => {
    const { runId } = await queuedRun();
    for (const token of [tokens.readTeam, tokens.orgToken]) {
      for (const action of ["cancel", "force-cancel"] as const)
        expect((await act(runId, action, token)).status, `${action}`).toBe(404);
    }
    expect((await act("run-doesnotexist00", "cancel")).status).toBe(404);
    expect((await runOf(runId)).attributes.status).toBe("plan_queued");
    expect((await act(runId, "cancel", tokens.manageTeam)).status).toBe(202);
    const { runId: second } = await queuedRun();
    expect((await act(second, "cancel", tokens.manageUser)).status).toBe(202);
    expect((await runOf(second)).attributes.status).toBe("canceled");
  });

  it("409 in HCP's error document for every status but pending, plan_queued, planning, apply_queued and applying", async () => {
    for (const status of [
      "planned",
      "planned_and_finished",
      "confirmed",
      "applied",
      "discarded",
      "errored",
      "canceled",
    ]) {
      const { runId } = await queuedRun();
      await env.DB.prepare("UPDATE runs SET status = ? WHERE id = ?").bind(status, runId).run();
      for (const action of ["cancel", "force-cancel"] as const) {
        const refused = await act(runId, action);
        expect(refused.status, `${action} of ${status}`).toBe(409);
        expect(refused.headers.get("content-type")).toContain("application/vnd.api+json");
        expect(refused.json.errors[0]).toMatchObject({ status: "409", title: "conflict" });
      }
      expect((await runOf(runId)).attributes.status).toBe(status);
    }
  });

  it("pending, plan_queued and apply_queued runs become canceled at once; their job leaves the pool's queue", async () => {
    // pending: a run not yet queued (its job row made not to exist, as before queueing).
    const pending = await queuedRun();
    await env.DB.batch([
      env.DB.prepare("DELETE FROM agent_jobs WHERE run_id = ?").bind(pending.runId),
      env.DB.prepare("UPDATE runs SET status = 'pending' WHERE id = ?").bind(pending.runId),
    ]);
    expect((await act(pending.runId, "cancel")).status).toBe(202);
    expect((await runOf(pending.runId)).attributes.status).toBe("canceled");

    const queued = await queuedRun();
    const shown = await runOf(queued.runId);
    expect(shown.attributes.actions).toMatchObject({ "is-cancelable": true, "is-force-cancelable": false });
    expect((await act(queued.runId, "cancel")).status).toBe(202);
    const canceled = await runOf(queued.runId);
    expect(canceled.attributes.status).toBe("canceled");
    expect(canceled.attributes["status-timestamps"]["canceled-at"]).toBeTypeOf("string");
    expect(canceled.attributes.actions["is-cancelable"]).toBe(false);
    // An agent of the pool gets nothing: the job left the queue.
    const session = await registerAgent(queued.poolToken, queued.engine);
    expect((await agentCall("GET", "jobs/next?wait=1", { session })).status).toBe(204);
    expect((await act(queued.runId, "cancel")).status).toBe(409);
    expect((await act(queued.runId, "force-cancel")).status).toBe(409);

    const confirmed = await applyRun(false);
    const locked = async () =>
      (await tfe("GET", `workspaces/${confirmed.workspaceId}`, { token: ctx.ownerToken })).json.data.attributes.locked;
    expect(await locked()).toBe(true); // an apply_queued run holds the workspace's lock (N20)
    expect((await act(confirmed.runId, "cancel")).status).toBe(202);
    expect((await runOf(confirmed.runId)).attributes.status).toBe("canceled");
    expect(await locked()).toBe(false);
    // Whether its apply job was queued yet or not, no agent is given it.
    expect((await agentCall("GET", "jobs/next?wait=2", { session: confirmed.session })).status).toBe(204);
    expect((await runOf(confirmed.runId)).attributes.status).toBe("canceled");
  });

  it("a remote run (the built-in planner) is canceled at once, even mid-plan", async () => {
    const { runId } = await createNoCodeWorkspace(ctx.noCodeModuleId, ctx.ownerToken, {});
    await waitForRun(runId, ctx.ownerToken, ["planned", "planned_and_finished", "applied"]);
    await env.DB.prepare("UPDATE runs SET status = 'planning' WHERE id = ?").bind(runId).run();
    expect((await act(runId, "cancel")).status).toBe(202);
    expect((await runOf(runId)).attributes.status).toBe("canceled");
  });
});

describe("cancel of a running job (N19a)", () => {
  it("mid-plan: the run stays planning, the next ping signals cancel, the agent finishes canceled, the lock is released", async () => {
    const { runId, workspaceId, session, jobId, jobToken } = await planningRun();
    expect((await ping(session)).json.signals).toEqual([]);
    expect((await act(runId, "cancel", tokens.manageTeam)).status).toBe(202);
    const asked = await runOf(runId);
    expect(asked.attributes.status).toBe("planning");
    expect(Date.parse(asked.attributes["force-cancel-available-at"]) - Date.now()).toBeGreaterThan(55_000);
    expect(asked.attributes.actions).toMatchObject({ "is-cancelable": true, "is-force-cancelable": false });
    const listed = await tfe("GET", `workspaces/${workspaceId}/runs`, { token: ctx.ownerToken });
    expect(listed.json.data[0].attributes["force-cancel-available-at"]).toBe(
      asked.attributes["force-cancel-available-at"],
    );
    // A second cancel is accepted and changes nothing; force-cancel must wait.
    expect((await act(runId, "cancel")).status).toBe(202);
    expect((await runOf(runId)).attributes["force-cancel-available-at"]).toBe(
      asked.attributes["force-cancel-available-at"],
    );
    const early = await act(runId, "force-cancel");
    expect(early.status).toBe(409);
    expect(early.json.errors[0].detail).toContain("60 s after the cancel");

    expect((await ping(session)).json.signals).toEqual([{ "job-id": jobId, signal: "cancel" }]);
    expect((await ping(session)).json.signals).toEqual([{ "job-id": jobId, signal: "cancel" }]);
    const log = await agentCall("PUT", `jobs/${jobId}/logs?offset=0`, {
      token: jobToken,
      rawBody: "Interrupt received.\n",
    });
    expect(log.status).toBe(200);
    const done = await agentCall("POST", `jobs/${jobId}/finish`, { token: jobToken, body: { status: "canceled" } });
    expect(done.json.job.status).toBe("canceled");
    const run = await runOf(runId);
    expect(run.attributes.status).toBe("canceled");
    expect(run.attributes["force-cancel-available-at"]).toBeNull();
    expect((await ping(session, "idle")).json.signals).toEqual([]);
    const ws = await tfe("GET", `workspaces/${workspaceId}`, { token: ctx.ownerToken });
    expect(ws.json.data.attributes.locked).toBe(false);
    expect((await act(runId, "force-cancel")).status).toBe(409);
  });

  it("a plan that completes after the cancel was asked still ends the run canceled", async () => {
    const { runId, jobId, jobToken } = await planningRun();
    expect((await act(runId, "cancel")).status).toBe(202);
    const plan = JSON.stringify(jsonPlanCreating(["terraform_data.a"]));
    expect((await agentCall("PUT", `jobs/${jobId}/json-plan`, { token: jobToken, rawBody: plan })).status).toBe(204);
    const done = await agentCall("POST", `jobs/${jobId}/finish`, { token: jobToken, body: { status: "finished" } });
    expect(done.json.job.status).toBe("canceled");
    expect((await runOf(runId)).attributes.status).toBe("canceled");
  });

  it("mid-apply: the interrupted apply's state is recorded, then the run is canceled", async () => {
    const { runId, workspaceId, session, applyJobId, applyToken } = await applyRun(true);
    expect((await act(runId, "cancel")).status).toBe(202);
    expect((await ping(session)).json.signals).toEqual([{ "job-id": applyJobId, signal: "cancel" }]);
    const state = JSON.stringify(stateWith(1, "lineage-cancel", ["terraform_data.a"]));
    const up = await agentCall("PUT", `jobs/${applyJobId}/state`, { token: applyToken!, rawBody: state });
    expect(up.status).toBe(200);
    const done = await agentCall("POST", `jobs/${applyJobId}/finish`, {
      token: applyToken!,
      body: { status: "canceled" },
    });
    expect(done.json.job.status).toBe("canceled");
    expect((await runOf(runId)).attributes.status).toBe("canceled");
    const current = await tfe("GET", `workspaces/${workspaceId}/current-state-version`, { token: ctx.ownerToken });
    expect(current.json.data.id).toBe(up.json["state-version-id"]);
    expect(current.json.data.attributes.serial).toBe(1);
  });
});

describe("a cancel racing a start (N19a)", () => {
  it("a signal for a job the pool does not run yet is applied when its start lands", async () => {
    const queued = await queuedRun();
    const session = await registerAgent(queued.poolToken, queued.engine);
    const jobId = (await agentCall("GET", "jobs/next?wait=5", { session })).json.job.id as string;
    // What a cancel arriving while the start's D1 batch is under way leaves behind (see AgentPool.jobCanceled).
    await runInDurableObject(poolStub(env, queued.poolId), (instance: AgentPool) => {
      const pending = (instance as unknown as { pendingSignals: Map<string, { signal: string; at: number }> })
        .pendingSignals;
      pending.set(jobId, { signal: "cancel", at: Date.now() });
    });
    expect((await agentCall("POST", `jobs/${jobId}/start`, { session })).status).toBe(200);
    expect((await ping(session)).json.signals).toEqual([{ "job-id": jobId, signal: "cancel" }]);
  });
});

describe("force-cancel (N19a)", () => {
  it("409 until 60 s after the cancel; then canceled at once, lock released, only the state upload usable, SIGKILL signalled", async () => {
    const { runId, workspaceId, session, applyJobId, applyToken } = await applyRun(true);
    expect((await act(runId, "force-cancel")).status).toBe(409); // no cancel asked yet
    expect((await act(runId, "cancel")).status).toBe(202);
    await askedAgo(runId, 59_000);
    expect((await act(runId, "force-cancel")).status).toBe(409);
    expect((await runOf(runId)).attributes.actions["is-force-cancelable"]).toBe(false);
    await askedAgo(runId, 61_000);
    expect((await runOf(runId)).attributes.actions["is-force-cancelable"]).toBe(true);
    expect((await act(runId, "force-cancel", tokens.readTeam)).status).toBe(404);
    expect((await act(runId, "force-cancel", tokens.orgToken)).status).toBe(404);
    expect((await act(runId, "force-cancel", tokens.manageUser)).status).toBe(202);

    const run = await runOf(runId);
    expect(run.attributes.status).toBe("canceled");
    const ws = await tfe("GET", `workspaces/${workspaceId}`, { token: ctx.ownerToken });
    expect(ws.json.data.attributes.locked).toBe(false);
    expect((await ping(session)).json.signals).toEqual([{ "job-id": applyJobId, signal: "force-cancel" }]);

    // The job token: the state upload only.
    const token = applyToken!;
    expect((await agentCall("PUT", `jobs/${applyJobId}/logs?offset=0`, { token, rawBody: "x" })).status).toBe(401);
    const finish = await agentCall("POST", `jobs/${applyJobId}/finish`, { token, body: { status: "canceled" } });
    expect(finish.status).toBe(401);
    expect((await agentCall("GET", `jobs/${applyJobId}/plan-file`, { token })).status).toBe(401);
    const state = JSON.stringify(stateWith(1, "lineage-force", ["terraform_data.a"]));
    const up = await agentCall("PUT", `jobs/${applyJobId}/state`, { token, rawBody: state });
    expect(up.status).toBe(200);
    expect(up.json.created).toBe(true);
    expect((await runOf(runId)).attributes.status).toBe("canceled");

    // The agent is free at once: it reads idle, and polling again it takes the next job.
    const agent = await tfe("GET", `agents/${session.agentId}`, { token: ctx.ownerToken });
    expect(agent.json.data.attributes.status).toBe("idle");
    expect((await agentCall("GET", "jobs/next?wait=1", { session })).status).toBe(204);
    expect((await ping(session, "idle")).json.signals).toEqual([]);
    expect((await act(runId, "force-cancel")).status).toBe(409);
  });
});
