/**
 * Lost agents (decision N18): the defaults of the thresholds (30 s → `unknown`, 300 s →
 * `errored`), and the pool's alarm at work: an agent silent past the first reads `unknown`,
 * past the second `errored`, and the run of its job errors naming it. The silence is made by
 * moving the session's last ping back inside the pool's Durable Object, then running its
 * alarm (the Workers test runtime's runDurableObjectAlarm).
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import type { AgentPool } from "../../../../src/nocode/agents/pool-object";
import { poolStub } from "../../../../src/nocode/agents/pool-stub";
import { AGENT_DEFAULTS, agentSettings } from "../../../../src/nocode/agents/settings";
import { agentCall, createAgentToken, createAgentWorkspace, createPool, registerAgent } from "../../../helpers/agents";
import { tfe } from "../../../helpers/nocode";
import { type NoCodeOrg, noCodeOrg, waitForRun } from "../../../helpers/nocode-modules";

let ctx: NoCodeOrg;
let engine: string;

beforeAll(async () => {
  ctx = await noCodeOrg();
  const releases = await tfe("GET", "admin/terraform-versions");
  engine = releases.json.data.find((r: { attributes: { enabled: boolean } }) => r.attributes.enabled).attributes
    .version;
});

/** Move an agent's last ping `ms` into the past, inside its pool's Durable Object. */
async function silence(poolId: string, agentId: string, ms: number): Promise<void> {
  await runInDurableObject(poolStub(env, poolId), (instance: AgentPool) => {
    // The session map is the object's private state; a test reaches into it to fake the passing of time.
    const session = (instance as unknown as { sessions: Map<string, { lastPingAt: number }> }).sessions.get(agentId)!;
    session.lastPingAt -= ms;
  });
}

describe("thresholds (N18)", () => {
  it("default to 30 s and 300 s, in code and in wrangler.jsonc's vars; the caps to 2 h and 24 h", () => {
    expect(AGENT_DEFAULTS.unknownAfterSeconds).toBe(30);
    expect(AGENT_DEFAULTS.erroredAfterSeconds).toBe(300);
    expect(agentSettings({})).toMatchObject({
      unknownAfterMs: 30_000,
      erroredAfterMs: 300_000,
      planJobLimitMs: 2 * 3600_000,
      applyJobLimitMs: 24 * 3600_000,
      minimumVersion: "0.1.0",
    });
    expect(agentSettings(env)).toMatchObject({ unknownAfterMs: 30_000, erroredAfterMs: 300_000 });
    // Malformed values fall back to the defaults; tests may shorten them to seconds.
    expect(agentSettings({ KEYWAY_AGENT_UNKNOWN_AFTER: "soon", KEYWAY_AGENT_ERRORED_AFTER: "-1" })).toMatchObject({
      unknownAfterMs: 30_000,
      erroredAfterMs: 300_000,
    });
    expect(agentSettings({ KEYWAY_AGENT_UNKNOWN_AFTER: "2", KEYWAY_AGENT_ERRORED_AFTER: "5" })).toMatchObject({
      unknownAfterMs: 2_000,
      erroredAfterMs: 5_000,
    });
  });
});

describe("the pool's alarm (N18)", () => {
  it("a silent agent reads unknown, then errored; its job's run errors naming it; the agent's next call is 401", async () => {
    const poolId = await createPool(ctx);
    const { token } = await createAgentToken(poolId, ctx.ownerToken);
    const { runId } = await createAgentWorkspace(ctx, poolId, { "engine-version": engine });
    const session = await registerAgent(token, engine, "vanishing");
    const polled = await agentCall("GET", "jobs/next?wait=5", { session });
    expect((await agentCall("POST", `jobs/${polled.json.job.id}/start`, { session })).status).toBe(200);

    await silence(poolId, session.agentId, 31_000);
    expect(await runDurableObjectAlarm(poolStub(env, poolId))).toBe(true);
    const unknown = await tfe("GET", `agents/${session.agentId}`, { token: ctx.ownerToken });
    expect(unknown.json.data.attributes.status).toBe("unknown");
    expect((await tfe("GET", `runs/${runId}`, { token: ctx.ownerToken })).json.data.attributes.status).toBe("planning");

    await silence(poolId, session.agentId, 270_000);
    expect(await runDurableObjectAlarm(poolStub(env, poolId))).toBe(true);
    const run = await waitForRun(runId, ctx.ownerToken, ["errored"]);
    expect(run.attributes["error-message"]).toBe("agent vanishing stopped responding");
    const errored = await tfe("GET", `agents/${session.agentId}`, { token: ctx.ownerToken });
    expect(errored.json.data.attributes.status).toBe("errored");
    expect((await agentCall("POST", "ping", { session, body: { status: "busy" } })).status).toBe(401);
  });

  it("a job past its cap errors its run naming the limit, and the next ping signals cancel", async () => {
    const poolId = await createPool(ctx);
    const { token } = await createAgentToken(poolId, ctx.ownerToken);
    const { runId } = await createAgentWorkspace(ctx, poolId, { "engine-version": engine });
    const session = await registerAgent(token, engine);
    const polled = await agentCall("GET", "jobs/next?wait=5", { session });
    const jobId = polled.json.job.id;
    const started = await agentCall("POST", `jobs/${jobId}/start`, { session });
    expect(Date.parse(started.json["expires-at"]) - Date.now()).toBeGreaterThan(2 * 3600_000 - 60_000);
    await runInDurableObject(poolStub(env, poolId), (instance: AgentPool) => {
      const running = (instance as unknown as { running: Map<string, { expiresAt: number }> }).running.get(jobId)!;
      running.expiresAt = Date.now() - 1;
    });
    await runDurableObjectAlarm(poolStub(env, poolId));
    const run = await waitForRun(runId, ctx.ownerToken, ["errored"]);
    expect(run.attributes["error-message"]).toBe("job exceeded its time limit (2h)");
    const ping = await agentCall("POST", "ping", { session, body: { status: "busy" } });
    expect(ping.json.signals).toEqual([{ "job-id": jobId, signal: "cancel" }]);
    // The token still serves finish within its grace.
    const done = await agentCall("POST", `jobs/${jobId}/finish`, {
      token: started.json["job-token"],
      body: { status: "canceled" },
    });
    expect(done.json.job.status).toBe("errored");
  });

  it("a job handed out but not started within a minute goes back to the queue for another agent", async () => {
    const poolId = await createPool(ctx);
    const { token } = await createAgentToken(poolId, ctx.ownerToken);
    const { runId } = await createAgentWorkspace(ctx, poolId, { "engine-version": engine });
    const first = await registerAgent(token, engine);
    const second = await registerAgent(token, engine);
    const polled = await agentCall("GET", "jobs/next?wait=5", { session: first });
    const jobId = polled.json.job.id;
    expect((await agentCall("GET", "jobs/next?wait=1", { session: second })).status).toBe(204);
    await runInDurableObject(poolStub(env, poolId), (instance: AgentPool) => {
      const queued = (instance as unknown as { queue: Map<string, { reservedAt: number }> }).queue.get(jobId)!;
      queued.reservedAt -= 61_000;
    });
    await runDurableObjectAlarm(poolStub(env, poolId));
    const again = await agentCall("GET", "jobs/next?wait=1", { session: second });
    expect(again.json.job).toMatchObject({ id: jobId, "run-id": runId });
    expect((await agentCall("POST", `jobs/${jobId}/start`, { session: first })).status).toBe(409);
    expect((await agentCall("POST", `jobs/${jobId}/start`, { session: second })).status).toBe(200);
  });

  it("an agent reporting exited ends its session: it reads exited and its next call is 401", async () => {
    const poolId = await createPool(ctx);
    const { token } = await createAgentToken(poolId, ctx.ownerToken);
    const session = await registerAgent(token, engine);
    expect((await agentCall("POST", "ping", { session, body: { status: "exited" } })).status).toBe(200);
    expect((await agentCall("POST", "ping", { session, body: { status: "idle" } })).status).toBe(401);
    expect((await agentCall("GET", "jobs/next?wait=1", { session })).status).toBe(401);
    const agent = await tfe("GET", `agents/${session.agentId}`, { token: ctx.ownerToken });
    expect(agent.json.data.attributes.status).toBe("exited");
  });

  it("an unknown agent that pings again is back to idle", async () => {
    const poolId = await createPool(ctx);
    const { token } = await createAgentToken(poolId, ctx.ownerToken);
    const session = await registerAgent(token, engine);
    await silence(poolId, session.agentId, 31_000);
    await runDurableObjectAlarm(poolStub(env, poolId));
    expect((await tfe("GET", `agents/${session.agentId}`, { token: ctx.ownerToken })).json.data.attributes.status).toBe(
      "unknown",
    );
    expect((await agentCall("POST", "ping", { session, body: { status: "idle" } })).status).toBe(200);
    expect((await tfe("GET", `agents/${session.agentId}`, { token: ctx.ownerToken })).json.data.attributes.status).toBe(
      "idle",
    );
  });
});
