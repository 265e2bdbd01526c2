/**
 * Cancel and force-cancel end to end (decision N19a): the real Worker, the real
 * `agent/keyway-agent` and the STAND-IN ENGINE (test/fixtures/agent/stand-in-engine.mjs),
 * which pauses at an exact point (STAND_IN_PAUSE) and, for a stuck engine, ignores SIGINT
 * (STAND_IN_IGNORE_SIGINT). The cancel goes through `POST /api/v2/runs/:id/actions/cancel`;
 * the agent learns it in the answer to its next ping (every 10 s), interrupts the engine with
 * SIGINT, uploads what it produced and finishes the job as `canceled`. Force-cancel waits
 * KEYWAY_FORCE_CANCEL_AFTER_SECONDS after the cancel: 60 s by default, shortened here to
 * {@link FORCE_AFTER} seconds through that deployment var.
 *
 * Each test has its own agent pool, so its jobs go only to its own agent.
 */
import { readdirSync } from "node:fs";
import { describe, expect, it, onTestFailed } from "vitest";
import { tfe } from "../../support/client";
import {
  type AgentOrg,
  addressesOf,
  agentWorld,
  createAgentWorkspace,
  createPool,
  currentState,
  engineVar,
  envVar,
  type Keyway,
  listAgents,
  type Pool,
  type StandInRecord,
  standInEngine,
  startAgent,
  waitForPause,
  waitForRun,
} from "./harness";

/** KEYWAY_FORCE_CANCEL_AFTER_SECONDS for these tests (the default is 60). */
const FORCE_AFTER = 3;

let keyway: Keyway;
let ctx: AgentOrg;
const cleanups = agentWorld(
  { shortThresholds: false, vars: { KEYWAY_FORCE_CANCEL_AFTER_SECONDS: String(FORCE_AFTER) } },
  (world) => {
    ({ keyway, ctx } = world);
  },
);

/** A pool, an agent on the stand-in engine, and an agent workspace whose first run is queued. */
async function scenario(options: { autoApply: boolean; env: Record<string, string> }) {
  const pool = await createPool(keyway, ctx);
  const record = standInEngine();
  cleanups.push(() => record.dispose());
  const agent = startAgent(keyway, pool, { engine: record.engine });
  cleanups.push(() => agent.dispose());
  onTestFailed(() => {
    console.log(`agent ${agent.name} stderr:\n${agent.stderr()}`);
    console.log(`calls:\n${keyway.proxy.requests.slice(-30).join("\n")}`);
    console.log(
      `stand-in record:\n${record
        .read()
        .map((r) => `${r.event} ${r.argv?.join(" ") ?? r.command ?? r.signal}`)
        .join("\n")}`,
    );
  });
  const vars = [
    engineVar("name", "alpha"),
    engineVar("secret", "cancel-test-secret", { sensitive: true }),
    ...Object.entries({ STAND_IN_CASE: "terraform-data", ...options.env }).map(([k, v]) => envVar(k, v)),
  ];
  const workspace = await createAgentWorkspace(keyway, ctx, pool, { autoApply: options.autoApply, vars });
  return { pool, record, agent, workspace };
}

const cancel = (runId: string, action: "cancel" | "force-cancel") =>
  tfe(keyway, "POST", `runs/${runId}/actions/${action}`, ctx.token, {});

const signalsOf = (record: { read(): StandInRecord[] }) => record.read().filter((r) => r.event === "signal");

/** Whether a process is gone. */
function gone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch {
    return true;
  }
}

async function until<T>(
  what: string,
  probe: () => T | undefined | Promise<T | undefined>,
  timeout = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeout;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined && value !== false) return value as T;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function agentStatus(pool: Pool, name: string): Promise<string | undefined> {
  const agents = await listAgents(keyway, ctx.token, pool.id);
  return agents.find((a) => a.attributes.name === name)?.attributes.status;
}

describe("cancel (N19a) with the real agent and the stand-in engine", () => {
  it("mid-plan: the agent sends the engine SIGINT on its next ping and finishes the job canceled; the agent stays", async () => {
    const { pool, record, agent, workspace } = await scenario({ autoApply: false, env: { STAND_IN_PAUSE: "plan:60" } });
    const paused = await waitForPause(record, "plan");
    expect((await cancel(workspace.runId, "cancel")).status).toBe(202);
    // Within one ping interval (10 s) and the engine's exit.
    const run = await waitForRun(keyway, ctx.token, workspace.runId, ["canceled"], 20_000);
    expect(run.attributes["force-cancel-available-at"]).toBeNull();
    expect(signalsOf(record)).toEqual([expect.objectContaining({ signal: "SIGINT", ignored: false, pid: paused.pid })]);
    expect(gone(paused.pid)).toBe(true);
    expect(keyway.proxy.allLogs()).toContain("Interrupt received");
    expect(agent.stderr()).toContain("canceled; interrupting the engine");
    // No show, no upload of a plan: the engine was interrupted.
    expect(record.read().filter((r) => r.argv?.[0] === "show")).toEqual([]);
    // The agent removes the job's directory after it has finished the job, so after the run reads canceled.
    await until("the job directory to be removed", () =>
      readdirSync(agent.workdir).every((f) => !f.startsWith("job-")),
    );
    await until("the agent to read idle", async () => (await agentStatus(pool, agent.name)) === "idle");
    expect(agent.child.exitCode).toBeNull();
    const ws = await tfe(keyway, "GET", `workspaces/${workspace.workspaceId}`, ctx.token);
    expect(ws.json.data.attributes.locked).toBe(false);
  });

  it("mid-apply: the interrupted apply's state is recorded as a state version, then the run is canceled", async () => {
    const { record, agent, workspace } = await scenario({ autoApply: true, env: { STAND_IN_PAUSE: "apply:60" } });
    const paused = await waitForPause(record, "apply");
    expect((await cancel(workspace.runId, "cancel")).status).toBe(202);
    expect((await tfe(keyway, "GET", `runs/${workspace.runId}`, ctx.token)).json.data.attributes.status).toBe(
      "applying",
    );
    await waitForRun(keyway, ctx.token, workspace.runId, ["canceled"], 20_000);
    expect(signalsOf(record)).toEqual([expect.objectContaining({ signal: "SIGINT", pid: paused.pid })]);
    // The one resource the engine applied before the interrupt is the workspace's state now.
    const state = await currentState(keyway, ctx.token, workspace.workspaceId);
    expect(addressesOf(state)).toHaveLength(1);
    const uploads = keyway.proxy.states.filter((s) => s.direction === "upload");
    expect(uploads.map((s) => s.status)).toEqual([200]);
    expect(JSON.parse(uploads[0]!.body).serial).toBe(state.attributes.serial);
    expect(keyway.proxy.allLogs()).toContain("Interrupt received");
    // The agent removes the job's directory after it has finished the job, so after the run reads canceled.
    await until("the job directory to be removed", () =>
      readdirSync(agent.workdir).every((f) => !f.startsWith("job-")),
    );
  });
});

describe(`force-cancel (N19a; KEYWAY_FORCE_CANCEL_AFTER_SECONDS=${FORCE_AFTER})`, () => {
  it("a stuck engine ignores SIGINT; force-cancel ends the run at once, the agent kills the engine and uploads its state", {
    timeout: 90_000,
  }, async () => {
    const { pool, record, agent, workspace } = await scenario({
      autoApply: true,
      env: { STAND_IN_PAUSE: "apply:120", STAND_IN_IGNORE_SIGINT: "1" },
    });
    const paused = await waitForPause(record, "apply");
    cleanups.push(() => {
      try {
        process.kill(paused.pid, "SIGKILL");
      } catch {}
    });
    const statesBefore = keyway.proxy.states.length;
    expect((await cancel(workspace.runId, "force-cancel")).status).toBe(409); // no cancel yet
    const askedAt = Date.now();
    expect((await cancel(workspace.runId, "cancel")).status).toBe(202);
    const early = await cancel(workspace.runId, "force-cancel");
    expect(early.status).toBe(409);
    expect(early.json.errors[0].detail).toContain(`${FORCE_AFTER} s after the cancel`);
    // The agent got the cancel and sent SIGINT, which the stuck engine ignored.
    await until("the engine to receive SIGINT", () => signalsOf(record).length > 0, 20_000);
    expect(signalsOf(record)).toEqual([expect.objectContaining({ signal: "SIGINT", ignored: true })]);
    expect(gone(paused.pid)).toBe(false);
    expect((await tfe(keyway, "GET", `runs/${workspace.runId}`, ctx.token)).json.data.attributes.status).toBe(
      "applying",
    );

    await new Promise((resolve) => setTimeout(resolve, Math.max(0, askedAt + FORCE_AFTER * 1000 + 200 - Date.now())));
    const run = (await tfe(keyway, "GET", `runs/${workspace.runId}`, ctx.token)).json.data;
    expect(run.attributes.actions["is-force-cancelable"]).toBe(true);
    expect((await cancel(workspace.runId, "force-cancel")).status).toBe(202);
    // Canceled at once, and the lock released.
    expect((await tfe(keyway, "GET", `runs/${workspace.runId}`, ctx.token)).json.data.attributes.status).toBe(
      "canceled",
    );
    const ws = await tfe(keyway, "GET", `workspaces/${workspace.workspaceId}`, ctx.token);
    expect(ws.json.data.attributes.locked).toBe(false);

    // On its next ping the agent kills the engine (SIGKILL) and uploads the state it wrote.
    await until("the engine to be killed", () => gone(paused.pid), 20_000);
    await until(
      "the state upload",
      () => keyway.proxy.states.slice(statesBefore).find((s) => s.direction === "upload"),
      20_000,
    );
    const upload = keyway.proxy.states.slice(statesBefore).find((s) => s.direction === "upload")!;
    expect(upload.status).toBe(200);
    expect(addressesOf(await currentState(keyway, ctx.token, workspace.workspaceId))).toHaveLength(1);
    expect(agent.stderr()).toContain("force-canceled; killing the engine");
    // It does not finish the job (Keyway ended it) and stays, idle, for the next job.
    await until("the job directory to be removed", () =>
      readdirSync(agent.workdir).every((f) => !f.startsWith("job-")),
    );
    expect(keyway.proxy.requests.filter((r) => r.includes("/finish"))).toEqual(
      expect.not.arrayContaining([expect.stringContaining("401")]),
    );
    await until("the agent to read idle", async () => (await agentStatus(pool, agent.name)) === "idle");
    expect(agent.child.exitCode).toBeNull();
    expect((await tfe(keyway, "GET", `runs/${workspace.runId}`, ctx.token)).json.data.attributes.status).toBe(
      "canceled",
    );
  });
});
