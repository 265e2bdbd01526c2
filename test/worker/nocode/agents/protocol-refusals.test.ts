/**
 * What the agent protocol refuses (decisions N17, N18, N20): credentials of the wrong kind,
 * a job token used for another job or agent, a replayed or gapped log chunk, a state of
 * another lineage or a serial not above the current one, uploads over their limits, an
 * agent program below the minimum version; and where an agent token reaches (nowhere but
 * the protocol). Deleting an agent token or an agent ends the session at once.
 */
import { beforeAll, describe, expect, it } from "vitest";
import {
  type AgentSession,
  agentCall,
  agentPoolOrg,
  createAgentToken,
  createAgentWorkspace,
  createPool,
  jsonPlanCreating,
  registerAgent,
  stateWith,
} from "../../../helpers/agents";
import { createMember, createOrgToken, tfe, uniqueName } from "../../../helpers/nocode";
import { type NoCodeOrg, varEntry, waitForRun } from "../../../helpers/nocode-modules";
import { workerRequest } from "../../../helpers/worker-request";

let ctx: NoCodeOrg;
let poolId: string;
let poolToken: string;
let engine: string;

beforeAll(async () => {
  ({ ctx, poolId, poolToken } = await agentPoolOrg());
  const releases = await tfe("GET", "admin/terraform-versions");
  engine = releases.json.data.find((r: { attributes: { enabled: boolean; beta: boolean } }) => r.attributes.enabled)
    .attributes.version;
});

/** An agent workspace pinned to `engine`, its run's plan job started by a new agent. */
async function startedPlan(autoApply = false) {
  const { workspace, runId } = await createAgentWorkspace(ctx, poolId, {
    "auto-apply": autoApply,
    "engine-version": engine,
  });
  const session = await registerAgent(poolToken, engine);
  const polled = await agentCall("GET", "jobs/next?wait=5", { session });
  expect(polled.status, polled.text).toBe(200);
  expect(polled.json.job["run-id"]).toBe(runId);
  const jobId = polled.json.job.id as string;
  const started = await agentCall("POST", `jobs/${jobId}/start`, { session });
  expect(started.status, started.text).toBe(200);
  return { workspace, runId, session, jobId, jobToken: started.json["job-token"] as string };
}

/** A run taken through plan (with auto-apply) to its started apply job. */
async function startedApply() {
  const plan = await startedPlan(true);
  await agentCall("PUT", `jobs/${plan.jobId}/json-plan`, {
    token: plan.jobToken,
    rawBody: JSON.stringify(jsonPlanCreating(["terraform_data.a"])),
  });
  await agentCall("POST", `jobs/${plan.jobId}/finish`, { token: plan.jobToken, body: { status: "finished" } });
  const polled = await agentCall("GET", "jobs/next?wait=5", { session: plan.session });
  expect(polled.json.job.phase).toBe("apply");
  const started = await agentCall("POST", `jobs/${polled.json.job.id}/start`, { session: plan.session });
  return { ...plan, applyId: polled.json.job.id as string, applyToken: started.json["job-token"] as string };
}

describe("credentials (N17, N18)", () => {
  it("register needs an agent token: user, team and organization tokens and garbage are 401", async () => {
    for (const token of [ctx.ownerToken, await createOrgToken(ctx.org), "garbage", `${"a".repeat(14)}.atlasv1.x`]) {
      const res = await agentCall("POST", "register", {
        token,
        body: { name: "a", version: "0.1.0", engine: { name: "terraform", version: engine } },
      });
      expect(res.status, token).toBe(401);
      expect(res.json.errors[0].status).toBe("401");
    }
    expect((await agentCall("POST", "register", { body: {} })).status).toBe(401);
  });

  it("an agent token reaches nothing but the protocol: /api/v2, the registry and /app answer 401", async () => {
    const auth = { Authorization: `Bearer ${poolToken}` };
    expect((await tfe("GET", `organizations/${ctx.org}`, { token: poolToken })).status).toBe(401);
    expect((await tfe("GET", `agent-pools/${poolId}`, { token: poolToken })).status).toBe(401);
    expect((await tfe("GET", "ping", { token: poolToken })).status).toBe(401);
    const registry = await workerRequest(
      `http://keyway.test/api/registry/v1/modules/${ctx.org}/${ctx.registryModule.name}/${ctx.registryModule.provider}/versions`,
      { headers: auth },
    );
    expect(registry.status).toBe(401);
    const page = await workerRequest(`http://keyway.test/app/${ctx.org}/workspaces/x/runs/run-AAAAAAAAAAAAAAAA`, {
      headers: auth,
    });
    expect(page.status).toBe(401);
  });

  it("426 names the minimum version; 400 names a bad field", async () => {
    const old = await agentCall("POST", "register", {
      token: poolToken,
      body: { name: "a", version: "0.0.9", engine: { name: "terraform", version: engine } },
    });
    expect(old.status).toBe(426);
    expect(old.json.errors[0].detail).toContain("minimum version 0.1.0");
    expect(old.json["minimum-version"]).toBe("0.1.0");
    const bad = await agentCall("POST", "register", {
      token: poolToken,
      body: { name: "a", version: "0.1.0", engine: { name: "pulumi", version: engine } },
    });
    expect(bad.status).toBe(400);
    expect(bad.json.errors[0].detail).toContain("engine.name");
  });

  it("a session call needs the session: another agent's secret, a made-up one or a job token → 401", async () => {
    const a = await registerAgent(poolToken, engine);
    const b = await registerAgent(poolToken, engine);
    const crossed: AgentSession = { ...a, sessionSecret: b.sessionSecret };
    expect((await agentCall("POST", "ping", { session: crossed, body: { status: "idle" } })).status).toBe(401);
    const madeUp: AgentSession = { ...a, sessionSecret: `${poolId}.nope` };
    expect((await agentCall("POST", "ping", { session: madeUp, body: { status: "idle" } })).status).toBe(401);
    expect((await agentCall("POST", "ping", { session: a, body: { status: "idle" } })).status).toBe(200);
  });

  it("a job token: another job's id or another agent → 404; as a session → 401; a pool token as a job token → 401", async () => {
    const one = await startedPlan();
    const two = await startedPlan();
    expect((await agentCall("GET", `jobs/${two.jobId}/inputs`, { token: one.jobToken })).status).toBe(404);
    const otherAgent = await agentCall("GET", `jobs/${one.jobId}/inputs`, {
      token: one.jobToken,
      headers: { "Keyway-Agent-Id": two.session.agentId },
    });
    expect(otherAgent.status).toBe(404);
    const asSession = await agentCall("POST", "ping", {
      session: { ...one.session, poolToken: one.jobToken },
      body: { status: "idle" },
    });
    expect(asSession.status).toBe(401);
    expect((await agentCall("GET", `jobs/${one.jobId}/inputs`, { token: poolToken })).status).toBe(401);
    expect((await agentCall("GET", `jobs/${one.jobId}/inputs`, { token: one.jobToken })).status).toBe(200);
  });

  it("deleting the agent token ends its sessions at once: next call 401, job canceled, agent exited", async () => {
    const pool = await createPool(ctx);
    const created = await createAgentToken(pool, ctx.ownerToken);
    const { runId } = await createAgentWorkspace(ctx, pool, { "engine-version": engine });
    const session = await registerAgent(created.token, engine, "doomed");
    const polled = await agentCall("GET", "jobs/next?wait=5", { session });
    const started = await agentCall("POST", `jobs/${polled.json.job.id}/start`, { session });
    expect(started.status).toBe(200);
    const listed = await tfe("GET", `agent-pools/${pool}/authentication-tokens`, { token: ctx.ownerToken });
    expect(listed.json.data.map((t: { id: string }) => t.id)).toContain(created.id);
    const shown = await tfe("GET", `authentication-tokens/${created.id}`, { token: ctx.ownerToken });
    expect(shown.status).toBe(200);
    expect(shown.json.data.attributes.token).toBeNull();
    expect(shown.json.data.relationships["agent-pool"].data).toEqual({ id: pool, type: "agent-pools" });
    // N17: a member without manage-agent-pools neither sees nor revokes it.
    const reader = await createMember(ctx.org, { "read-workspaces": true });
    expect((await tfe("GET", `authentication-tokens/${created.id}`, { token: reader.token })).status).toBe(404);
    expect((await tfe("DELETE", `authentication-tokens/${created.id}`, { token: reader.token })).status).toBe(404);
    expect((await tfe("GET", `agent-pools/${pool}/authentication-tokens`, { token: reader.token })).status).toBe(404);
    expect((await tfe("GET", `agent-pools/${pool}/agents`, { token: reader.token })).status).toBe(200);
    expect((await tfe("DELETE", `authentication-tokens/${created.id}`, { token: ctx.ownerToken })).status).toBe(204);
    expect((await agentCall("POST", "ping", { session, body: { status: "busy" } })).status).toBe(401);
    const run = await waitForRun(runId, ctx.ownerToken, ["canceled"]);
    expect(run.attributes["error-message"]).toContain("revoked");
    const agent = await tfe("GET", `agents/${session.agentId}`, { token: ctx.ownerToken });
    expect(agent.json.data.attributes.status).toBe("exited");
    expect(
      (
        await agentCall("POST", "register", {
          token: created.token,
          body: { name: "x", version: "0.1.0", engine: { name: "terraform", version: engine } },
        })
      ).status,
    ).toBe(401);
  });

  it("deleting an agent ends its session at once and it is no longer listed", async () => {
    const session = await registerAgent(poolToken, engine, "to-remove");
    const listed = await tfe("GET", `agent-pools/${poolId}/agents`, { token: ctx.ownerToken });
    const row = listed.json.data.find((a: { id: string }) => a.id === session.agentId);
    const before = (await tfe("GET", `agent-pools/${poolId}`, { token: ctx.ownerToken })).json.data.attributes[
      "agent-count"
    ];
    expect(before).toBeGreaterThan(0);
    expect(row.attributes).toMatchObject({ name: "to-remove", status: "idle", "engine-name": "terraform" });
    expect((await tfe("DELETE", `agents/${session.agentId}`, { token: ctx.ownerToken })).status).toBe(204);
    expect((await agentCall("POST", "ping", { session, body: { status: "idle" } })).status).toBe(401);
    expect((await tfe("GET", `agents/${session.agentId}`, { token: ctx.ownerToken })).status).toBe(404);
    const after = (await tfe("GET", `agent-pools/${poolId}`, { token: ctx.ownerToken })).json.data.attributes[
      "agent-count"
    ];
    expect(after).toBe(before - 1);
  });
});

describe("logs (N18)", () => {
  it("a replayed chunk is idempotent, an overlapping one appends its tail, a gap is 409, over 1 MiB is 413", async () => {
    const { jobId, jobToken } = await startedPlan();
    const put = (offset: number, body: string | Uint8Array) =>
      agentCall("PUT", `jobs/${jobId}/logs?offset=${offset}`, { token: jobToken, rawBody: body });
    expect((await put(0, "hello ")).json.length).toBe(6);
    expect((await put(0, "hello ")).json.length).toBe(6);
    expect((await put(3, "lo world")).json.length).toBe(11);
    const gap = await put(20, "x");
    expect(gap.status).toBe(409);
    expect(gap.json.meta.length).toBe(11);
    const big = await put(11, new Uint8Array(1024 * 1024 + 1));
    expect(big.status).toBe(413);
    expect(big.json.errors[0].detail).toBe("log chunk exceeds the limit of 1 MiB");
    expect((await put(-1 as unknown as number, "x")).status).toBe(400);
  });
});

describe("uploads and state (N20)", () => {
  it("uploads over their limits are 413 naming the limit", async () => {
    const { jobId, jobToken } = await startedPlan();
    const claim = (what: string, length: number) =>
      agentCall("PUT", `jobs/${jobId}/${what}`, {
        token: jobToken,
        rawBody: "x",
        headers: { "Content-Length": String(length) },
      });
    const planFile = await claim("plan-file", 64 * 1024 * 1024 + 1);
    expect(planFile.status).toBe(413);
    expect(planFile.json.errors[0].detail).toBe("plan-file exceeds the limit of 64 MiB");
    const jsonPlan = await claim("json-plan", 64 * 1024 * 1024 + 1);
    expect(jsonPlan.json.errors[0].detail).toBe("JSON plan exceeds the limit of 64 MiB");
    const lock = await agentCall("PUT", `jobs/${jobId}/lock-file`, {
      token: jobToken,
      rawBody: new Uint8Array(1024 * 1024 + 1),
    });
    expect(lock.status).toBe(413);
    expect(lock.json.errors[0].detail).toBe("lock-file exceeds the limit of 1 MiB");
    const notJson = await agentCall("PUT", `jobs/${jobId}/json-plan`, { token: jobToken, rawBody: "{" });
    expect(notJson.status).toBe(400);
    expect(notJson.json.errors[0].detail).toContain("the JSON plan is not valid: not JSON");
    // Without Content-Length a JSON plan is taken as a stream and refused once it passes 64 MiB.
    const piece = new TextEncoder().encode("b".repeat(1024 * 1024));
    let sent = 0;
    const chunked = await agentCall("PUT", `jobs/${jobId}/json-plan`, {
      token: jobToken,
      rawBody: new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent === 0) controller.enqueue(new TextEncoder().encode('{"format_version":"1.2","x":"'));
          if (sent > 65) controller.close();
          else controller.enqueue(piece);
          sent++;
        },
      }),
    });
    expect(chunked.status).toBe(413);
    expect(chunked.json.errors[0].detail).toBe("JSON plan exceeds the limit of 64 MiB");
    // A plan job does not upload state.
    const state = await agentCall("PUT", `jobs/${jobId}/state`, { token: jobToken, rawBody: "{}" });
    expect(state.status).toBe(409);
  });

  it("state: same serial and bytes is a no-op; another lineage → 409 lineage mismatch; the run errors", async () => {
    const { runId, applyId, applyToken } = await startedApply();
    const put = (state: unknown) =>
      agentCall("PUT", `jobs/${applyId}/state`, { token: applyToken, rawBody: JSON.stringify(state) });
    const first = stateWith(3, "L1", ["terraform_data.a"]);
    expect((await put(first)).json).toMatchObject({ serial: 3, created: true });
    const again = await put(first);
    expect(again.json).toMatchObject({ serial: 3, created: false });
    const big = await agentCall("PUT", `jobs/${applyId}/state`, {
      token: applyToken,
      rawBody: "x",
      headers: { "Content-Length": String(64 * 1024 * 1024 + 1) },
    });
    expect(big.json.errors[0].detail).toBe("state exceeds the limit of 64 MiB");
    // Without Content-Length the state is taken as a stream and refused once it passes 64 MiB.
    const piece = new TextEncoder().encode("a".repeat(1024 * 1024));
    let sent = 0;
    const chunked = await agentCall("PUT", `jobs/${applyId}/state`, {
      token: applyToken,
      rawBody: new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent === 0) controller.enqueue(new TextEncoder().encode('{"serial":9,"lineage":"L1","x":"'));
          if (sent > 65) controller.close();
          else controller.enqueue(piece);
          sent++;
        },
      }),
    });
    expect(chunked.status).toBe(413);
    expect(chunked.json.errors[0].detail).toBe("state exceeds the limit of 64 MiB");
    expect((await put(first)).json).toMatchObject({ serial: 3, created: false });
    const other = await put(stateWith(4, "L2", ["terraform_data.a"]));
    expect(other.status).toBe(409);
    expect(other.json.errors[0].detail).toBe("lineage mismatch");
    const run = await waitForRun(runId, ctx.ownerToken, ["errored"]);
    expect(run.attributes["error-message"]).toBe("lineage mismatch");
  });

  it("state: the same serial with other content, or a lower serial → 409 serial N is not above the current M", async () => {
    const { applyId, applyToken } = await startedApply();
    const put = (state: unknown) =>
      agentCall("PUT", `jobs/${applyId}/state`, { token: applyToken, rawBody: JSON.stringify(state) });
    expect((await put(stateWith(5, "L", ["terraform_data.a"]))).status).toBe(200);
    const same = await put(stateWith(5, "L", ["terraform_data.a", "terraform_data.b"]));
    expect(same.status).toBe(409);
    expect(same.json.errors[0].detail).toBe("serial 5 is not above the current 5");
    const lower = await put(stateWith(4, "L", ["terraform_data.a"]));
    expect(lower.json.errors[0].detail).toBe("serial 4 is not above the current 5");
  });
});

describe("allocation (N18)", () => {
  it("many agents polling for one job: exactly one gets it", async () => {
    const pool = await createPool(ctx);
    const { token } = await createAgentToken(pool, ctx.ownerToken);
    const sessions = await Promise.all(Array.from({ length: 8 }, () => registerAgent(token, engine)));
    const polls = sessions.map((session) => agentCall("GET", "jobs/next?wait=3", { session }));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const { runId } = await createAgentWorkspace(ctx, pool, { "engine-version": engine });
    const answers = await Promise.all(polls);
    const got = answers.filter((a) => a.status === 200);
    expect(got.length).toBe(1);
    expect(got[0]!.json.job["run-id"]).toBe(runId);
    expect(answers.filter((a) => a.status === 204).length).toBe(7);
    // Only that agent may start it.
    const winner = sessions[answers.indexOf(got[0]!)]!;
    const loser = sessions.find((s) => s !== winner)!;
    expect((await agentCall("POST", `jobs/${got[0]!.json.job.id}/start`, { session: loser })).status).toBe(409);
    expect((await agentCall("POST", `jobs/${got[0]!.json.job.id}/start`, { session: winner })).status).toBe(200);
  });

  it("a waiting poll receives a job within a second of the commit that queued it", async () => {
    const pool = await createPool(ctx);
    const { token } = await createAgentToken(pool, ctx.ownerToken);
    const session = await registerAgent(token, engine);
    const poll = agentCall("GET", "jobs/next?wait=10", { session }).then((res) => ({ res, at: Date.now() }));
    await new Promise((resolve) => setTimeout(resolve, 100));
    await createAgentWorkspace(ctx, pool, { "engine-version": engine });
    const { res, at } = await poll;
    expect(res.status).toBe(200);
    expect(at - Date.parse(res.json.job["queued-at"])).toBeLessThan(1000);
  });

  it("a job goes only to an agent whose engine satisfies the workspace's engine version; the run says why it waits", async () => {
    const pool = await createPool(ctx, uniqueName("pool"));
    const { token } = await createAgentToken(pool, ctx.ownerToken);
    const other = await registerAgent(token, "0.1.0");
    const { runId } = await createAgentWorkspace(ctx, pool, { "engine-version": engine });
    expect((await agentCall("GET", "jobs/next?wait=1", { session: other })).status).toBe(204);
    const run = await tfe("GET", `runs/${runId}`, { token: ctx.ownerToken });
    expect(run.json.data.attributes.status).toBe("plan_queued");
    expect(run.json.data.attributes["status-reason"]).toContain(
      `no registered agent runs an engine version satisfying ${engine}`,
    );
    const right = await registerAgent(token, engine);
    expect((await agentCall("GET", "jobs/next?wait=2", { session: right })).status).toBe(200);
  });
});

describe("workspace env variables the agent controls (N21)", () => {
  it("E4 and POST /vars refuse reserved env names with 422", async () => {
    for (const key of [
      "KEYWAY_AGENT_TOKEN",
      "TF_CLI_ARGS_plan",
      "TF_LOG",
      "LD_PRELOAD",
      "PATH",
      "HOME",
      "NODE_OPTIONS",
    ]) {
      const res = await tfe("POST", `no-code-modules/${ctx.noCodeModuleId}/workspaces`, {
        token: ctx.ownerToken,
        body: {
          data: {
            type: "workspaces",
            attributes: { name: uniqueName("ws") },
            relationships: { vars: { data: [varEntry("prefix", "p"), varEntry(key, "x", { category: "env" })] } },
          },
        },
      });
      expect(res.status, key).toBe(422);
      expect(res.json.errors[0].detail).toContain(`Key ${key} is reserved`);
    }
    const { workspace } = await createAgentWorkspace(ctx, poolId, { "engine-version": engine });
    const res = await tfe("POST", `workspaces/${workspace.id}/vars`, {
      token: ctx.ownerToken,
      body: { data: { type: "vars", attributes: { key: "TF_DATA_DIR", value: "/tmp", category: "env" } } },
    });
    expect(res.status).toBe(422);
    const fine = await tfe("POST", `workspaces/${workspace.id}/vars`, {
      token: ctx.ownerToken,
      body: { data: { type: "vars", attributes: { key: "AWS_REGION", value: "x", category: "env" } } },
    });
    expect(fine.status).toBe(201);
  });
});
