/**
 * Workspace locks (decision N20): HCP's `actions/lock|unlock|force-unlock` and their codes,
 * the rights (lock and unlock: manage-workspaces users and teams; force-unlock: owners), a
 * run holding the lock from `planning` to its end, and a user's lock keeping an agent
 * workspace's queued run in `plan_queued` (its pool hands out no plan job meanwhile).
 */
import { beforeAll, describe, expect, it } from "vitest";
import {
  agentCall,
  createAgentToken,
  createAgentWorkspace,
  createPool,
  jsonPlanCreating,
  registerAgent,
} from "../../../helpers/agents";
import { tfe, type WorkspaceRightsTokens, workspaceRightsTokens } from "../../../helpers/nocode";
import { createNoCodeWorkspace, type NoCodeOrg, noCodeOrg, waitForRun } from "../../../helpers/nocode-modules";

let ctx: NoCodeOrg;
let poolId: string;
let poolToken: string;
let tokens: WorkspaceRightsTokens;

beforeAll(async () => {
  ctx = await noCodeOrg();
  tokens = await workspaceRightsTokens(ctx.org);
}, 60_000);

const act = (workspaceId: string, action: string, token: string) =>
  tfe("POST", `workspaces/${workspaceId}/actions/${action}`, { token, body: { reason: "testing" } });

/**
 * An agent workspace whose first run waits in plan_queued (no agent yet), in a pool of its
 * own so that no other test's queued job reaches its agents.
 */
async function queuedAgentWorkspace() {
  poolId = await createPool(ctx);
  poolToken = (await createAgentToken(poolId, ctx.ownerToken)).token;
  const { workspace, runId } = await createAgentWorkspace(ctx, poolId);
  const ws = await tfe("GET", `workspaces/${workspace.id}`, { token: ctx.ownerToken });
  return { workspaceId: workspace.id, runId, engine: ws.json.data.attributes["terraform-version"] as string };
}

describe("workspace locks (N20)", () => {
  it("lock, unlock and force-unlock answer HCP's codes; rights by token kind", async () => {
    const { workspaceId } = await queuedAgentWorkspace();
    for (const token of [tokens.readTeam, tokens.orgToken]) {
      for (const action of ["lock", "unlock", "force-unlock"])
        expect((await act(workspaceId, action, token)).status, `${action}`).toBe(404);
    }
    const locked = await act(workspaceId, "lock", tokens.manageTeam);
    expect(locked.status).toBe(200);
    expect(locked.json.data.attributes.locked).toBe(true);
    expect(locked.json.data.relationships["locked-by"].data.type).toBe("teams");
    expect((await act(workspaceId, "lock", tokens.manageTeam)).status).toBe(409);
    expect((await act(workspaceId, "lock", tokens.manageUser)).status).toBe(409);
    // Another holder may not unlock; force-unlock is for owners only.
    const notMine = await act(workspaceId, "unlock", tokens.manageUser);
    expect(notMine.status).toBe(409);
    expect(notMine.json.errors[0].detail).toContain("locked by a different user");
    expect((await act(workspaceId, "force-unlock", tokens.manageTeam)).status).toBe(404);
    const unlocked = await act(workspaceId, "unlock", tokens.manageTeam);
    expect(unlocked.status).toBe(200);
    expect(unlocked.json.data.attributes.locked).toBe(false);
    expect((await act(workspaceId, "unlock", tokens.manageTeam)).status).toBe(409);
    expect((await act(workspaceId, "force-unlock", ctx.ownerToken)).status).toBe(409);

    expect((await act(workspaceId, "lock", tokens.manageUser)).status).toBe(200);
    const forced = await act(workspaceId, "force-unlock", ctx.ownerToken);
    expect(forced.status).toBe(200);
    expect(forced.json.data.attributes.locked).toBe(false);
    expect(forced.json.data.relationships["locked-by"].data).toBeNull();
    expect(
      (await tfe("GET", `workspaces/${workspaceId}`, { token: tokens.readTeam })).json.data.attributes.locked,
    ).toBe(false);
  });

  it("a user's lock keeps the queued run in plan_queued; unlocking hands its job out", async () => {
    const { workspaceId, runId, engine } = await queuedAgentWorkspace();
    expect((await act(workspaceId, "lock", ctx.ownerToken)).status).toBe(200);
    const session = await registerAgent(poolToken, engine);
    const polled = await agentCall("GET", "jobs/next?wait=1", { session });
    expect(polled.status).toBe(204);
    expect((await tfe("GET", `runs/${runId}`, { token: ctx.ownerToken })).json.data.attributes.status).toBe(
      "plan_queued",
    );
    expect((await act(workspaceId, "unlock", ctx.ownerToken)).status).toBe(200);
    const next = await agentCall("GET", "jobs/next?wait=2", { session });
    expect(next.status).toBe(200);
    expect(next.json.job).toMatchObject({ "run-id": runId, phase: "plan" });
  });

  it("a run holds the lock from planning to its end; force-unlock is 409 while it applies", async () => {
    const { workspaceId, runId, engine } = await queuedAgentWorkspace();
    const session = await registerAgent(poolToken, engine);
    const polled = await agentCall("GET", "jobs/next?wait=2", { session });
    const jobId = polled.json.job.id;
    const jobToken = (await agentCall("POST", `jobs/${jobId}/start`, { session })).json["job-token"];
    // planning: the run holds the lock.
    const shown = await tfe("GET", `workspaces/${workspaceId}`, { token: tokens.readTeam });
    expect(shown.json.data.attributes.locked).toBe(true);
    expect(shown.json.data.relationships["locked-by"].data).toEqual({ id: runId, type: "runs" });
    expect((await act(workspaceId, "lock", ctx.ownerToken)).status).toBe(409);
    const byRun = await act(workspaceId, "unlock", ctx.ownerToken);
    expect(byRun.status).toBe(409);
    expect(byRun.json.errors[0].detail).toContain("locked by a run");
    await agentCall("PUT", `jobs/${jobId}/json-plan`, {
      token: jobToken,
      rawBody: JSON.stringify(jsonPlanCreating(["terraform_data.a"])),
    });
    await agentCall("POST", `jobs/${jobId}/finish`, { token: jobToken, body: { status: "finished" } });
    await waitForRun(runId, ctx.ownerToken, ["planned"]);
    // planned still holds the lock until the run ends.
    expect((await act(workspaceId, "lock", ctx.ownerToken)).status).toBe(409);
    expect((await tfe("POST", `runs/${runId}/actions/apply`, { token: ctx.ownerToken })).status).toBe(202);
    const apply = await agentCall("GET", "jobs/next?wait=2", { session });
    const applyId = apply.json.job.id;
    const applyToken = (await agentCall("POST", `jobs/${applyId}/start`, { session })).json["job-token"];
    await waitForRun(runId, ctx.ownerToken, ["applying"]);
    const applying = await act(workspaceId, "force-unlock", ctx.ownerToken);
    expect(applying.status).toBe(409);
    expect(applying.json.errors[0].detail).toContain("applying");
    await agentCall("POST", `jobs/${applyId}/finish`, { token: applyToken, body: { status: "errored", message: "x" } });
    await waitForRun(runId, ctx.ownerToken, ["errored"]);
    // The run ended: the lock is free.
    expect((await act(workspaceId, "lock", ctx.ownerToken)).status).toBe(200);
  });

  it("force-unlock of a lock a planning run holds cancels the run and signals its agent", async () => {
    const { workspaceId, runId, engine } = await queuedAgentWorkspace();
    const session = await registerAgent(poolToken, engine);
    const jobId = (await agentCall("GET", "jobs/next?wait=2", { session })).json.job.id;
    const jobToken = (await agentCall("POST", `jobs/${jobId}/start`, { session })).json["job-token"];
    await waitForRun(runId, ctx.ownerToken, ["planning"]);
    expect((await act(workspaceId, "force-unlock", tokens.manageTeam)).status).toBe(404);
    const forced = await act(workspaceId, "force-unlock", ctx.ownerToken);
    expect(forced.status).toBe(200);
    expect(forced.json.data.attributes.locked).toBe(false);
    const run = await waitForRun(runId, ctx.ownerToken, ["canceled"]);
    expect(run.attributes["error-message"]).toBe("the workspace's lock was force-unlocked by an owner");
    const ping = await agentCall("POST", "ping", { session, body: { status: "busy" } });
    expect(ping.json.signals).toEqual([{ "job-id": jobId, signal: "cancel" }]);
    // The agent's finish answers the ended job; the workspace is free for a user's lock.
    const done = await agentCall("POST", `jobs/${jobId}/finish`, { token: jobToken, body: { status: "canceled" } });
    expect(done.status).toBe(200);
    expect((await tfe("GET", `runs/${runId}`, { token: ctx.ownerToken })).json.data.attributes.status).toBe("canceled");
    expect((await act(workspaceId, "lock", tokens.manageUser)).status).toBe(200);
    expect((await act(workspaceId, "force-unlock", ctx.ownerToken)).status).toBe(200);
  });

  it("force-unlock discards a planned run and cancels one whose apply is queued (its job is never handed out)", async () => {
    const planned = async () => {
      const { workspaceId, runId, engine } = await queuedAgentWorkspace();
      const session = await registerAgent(poolToken, engine);
      const jobId = (await agentCall("GET", "jobs/next?wait=2", { session })).json.job.id;
      const token = (await agentCall("POST", `jobs/${jobId}/start`, { session })).json["job-token"];
      await agentCall("PUT", `jobs/${jobId}/json-plan`, {
        token,
        rawBody: JSON.stringify(jsonPlanCreating(["terraform_data.a"])),
      });
      await agentCall("POST", `jobs/${jobId}/finish`, { token, body: { status: "finished" } });
      await waitForRun(runId, ctx.ownerToken, ["planned"]);
      return { workspaceId, runId, session };
    };
    const first = await planned();
    const forced = await act(first.workspaceId, "force-unlock", ctx.ownerToken);
    expect(forced.status).toBe(200);
    expect(forced.json.data.attributes.locked).toBe(false);
    expect((await tfe("GET", `runs/${first.runId}`, { token: ctx.ownerToken })).json.data.attributes.status).toBe(
      "discarded",
    );
    expect((await act(first.workspaceId, "force-unlock", ctx.ownerToken)).status).toBe(409);

    const second = await planned();
    expect((await tfe("POST", `runs/${second.runId}/actions/apply`, { token: ctx.ownerToken })).status).toBe(202);
    await waitForRun(second.runId, ctx.ownerToken, ["apply_queued"]);
    expect((await act(second.workspaceId, "force-unlock", ctx.ownerToken)).status).toBe(200);
    const canceled = await waitForRun(second.runId, ctx.ownerToken, ["canceled"]);
    expect(canceled.attributes["error-message"]).toBe("the workspace's lock was force-unlocked by an owner");
    expect((await agentCall("GET", "jobs/next?wait=1", { session: second.session })).status).toBe(204);
  });

  it("force-unlock of a remote workspace's planned run discards it", async () => {
    const { workspace, runId } = await createNoCodeWorkspace(ctx.noCodeModuleId, ctx.ownerToken, {
      "auto-apply": false,
    });
    await waitForRun(runId, ctx.ownerToken, ["planned"]);
    expect((await act(workspace.id, "lock", tokens.manageTeam)).status).toBe(409);
    const forced = await act(workspace.id, "force-unlock", ctx.ownerToken);
    expect(forced.status).toBe(200);
    expect(forced.json.data.attributes.locked).toBe(false);
    expect((await tfe("GET", `runs/${runId}`, { token: ctx.ownerToken })).json.data.attributes.status).toBe(
      "discarded",
    );
    expect((await act(workspace.id, "lock", tokens.manageTeam)).status).toBe(200);
  });
});
