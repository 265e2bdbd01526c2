/**
 * Upgrades and rollouts of agent workspaces end to end (decisions N8, N15, N19, N19a): the
 * real Worker, the real `agent/keyway-agent` and the STAND-IN ENGINE
 * (test/fixtures/agent/stand-in-engine.mjs; real-engine.test.ts upgrades with the real
 * `terraform`). E5 queues a plan job and answers `pending`; E6 follows the run through
 * `planning` to `planned`; E7 sends the apply job; a discard of a run still queued cancels
 * it; a rollout waits on the agents' plans and judges `auto-confirm` on their real counts.
 *
 * Each test has its own agent pool, so its jobs go only to its own agents.
 */
import { beforeAll, describe, expect, it, onTestFailed } from "vitest";
import { type Answer, type Json, tfe } from "../../support/client";
import { movePin, publishModuleVersion } from "../console/seed";
import {
  type AgentOrg,
  type AgentProcess,
  agentWorld,
  createAgentWorkspace,
  createPool,
  currentState,
  engineVar,
  envVar,
  type Keyway,
  moduleFiles,
  type Pool,
  readPlan,
  standInEngine,
  startAgent,
  waitForRun,
} from "./harness";

let keyway: Keyway;
let ctx: AgentOrg;
let engine: string;
const cleanups = agentWorld({ shortThresholds: true }, (world) => {
  ({ keyway, ctx } = world);
});

beforeAll(() => {
  const record = standInEngine();
  cleanups.push(() => record.dispose());
  engine = record.engine;
});

/** An agent of `pool` on the stand-in engine, stopped after the test file; its stderr shown on a failure. */
function agentOf(pool: Pool): AgentProcess {
  const agent = startAgent(keyway, pool, { engine });
  cleanups.push(() => agent.dispose());
  onTestFailed(() => {
    console.log(`agent ${agent.name} stderr:\n${agent.stderr()}`);
    console.log(`calls:\n${keyway.proxy.requests.slice(-30).join("\n")}`);
  });
  return agent;
}

/** Stop an agent as an operator does (SIGTERM while idle: it exits 0). */
async function stopAgent(agent: AgentProcess): Promise<void> {
  agent.child.kill("SIGTERM");
  expect(await agent.exited).toEqual({ code: 0, signal: null });
}

const upgradePath = (workspaceId: string, runId?: string) =>
  `no-code-modules/${ctx.noCodeModuleId}/workspaces/${workspaceId}/upgrade${runId ? `/${runId}` : ""}`;

/** E5 with `vars`. */
function e5(workspaceId: string, vars: ReturnType<typeof engineVar>[] = []) {
  return tfe(keyway, "POST", upgradePath(workspaceId), ctx.token, {
    data: { type: "workspaces", relationships: { vars: { data: vars } } },
  });
}

/** E6's status. */
async function e6(workspaceId: string, runId: string): Promise<string> {
  const read = await tfe(keyway, "GET", upgradePath(workspaceId, runId), ctx.token);
  expect(read.status, JSON.stringify(read.json)).toBe(200);
  return read.json.data.attributes.status;
}

/** E7 (plain text answer). */
function e7(workspaceId: string, runId: string): Promise<Answer> {
  return tfe(keyway, "POST", upgradePath(workspaceId, runId), ctx.token);
}

/** Poll E6 until it reads `status`, returning every status it read on the way (in order, without repeats). */
async function followE6(
  workspaceId: string,
  runId: string,
  status: string,
  seen: string[] = [],
  timeout = 60_000,
): Promise<string[]> {
  const deadline = Date.now() + timeout;
  while (Date.now() < deadline) {
    const now = await e6(workspaceId, runId);
    if (seen[seen.length - 1] !== now) seen.push(now);
    if (now === status) return seen;
    if (["errored", "canceled", "discarded", "applied"].includes(now)) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`upgrade ${runId} read ${seen.join(" → ")}, never ${status}`);
}

/** An agent workspace of `pool` whose first run `agent` applied (auto-apply). */
async function appliedWorkspace(pool: Pool, env: Record<string, string> = {}) {
  const workspace = await createAgentWorkspace(keyway, ctx, pool, {
    autoApply: true,
    vars: [
      engineVar("name", "alpha"),
      engineVar("secret", "not-shown", { sensitive: true }),
      ...Object.entries(env).map(([k, v]) => envVar(k, v)),
    ],
  });
  await waitForRun(keyway, ctx.token, workspace.runId, ["applied"]);
  return workspace;
}

describe("E5–E7 on an agent workspace, with the stand-in engine (N19)", () => {
  it("E5 → pending (no agent) → planning → planned → E7 → applied, the state's serial above the first run's", async () => {
    const pool = await createPool(keyway, ctx);
    const first = agentOf(pool);
    const workspace = await appliedWorkspace(pool, { STAND_IN_PAUSE: "plan:2" });
    const before = await currentState(keyway, ctx.token, workspace.workspaceId);
    // No agent runs now: the upgrade waits for one, as E6 and the run say.
    await stopAgent(first);

    const started = await e5(workspace.workspaceId, [engineVar("size", "2")]);
    expect(started.status, JSON.stringify(started.json)).toBe(200);
    expect(started.json.data.attributes.status).toBe("pending");
    expect(started.json.data.attributes["plan-url"]).toContain(`/runs/${started.json.data.id}?view=`);
    const runId = started.json.data.id as string;
    const firstStatus = await e6(workspace.workspaceId, runId);
    expect(firstStatus).toBe("pending");
    const run = await waitForRun(keyway, ctx.token, runId, ["plan_queued"]);
    expect(run.attributes["status-reason"] ?? "").toContain(`waiting for an agent of pool ${pool.name}`);

    // An agent comes: the run is planned (the stand-in pauses 2 s mid-plan, so E6 reads planning).
    agentOf(pool);
    const seen = await followE6(workspace.workspaceId, runId, "planned", [firstStatus]);
    expect(seen).toEqual(["pending", "planning", "planned"]);
    const planned = await waitForRun(keyway, ctx.token, runId, ["planned"]);
    expect((await readPlan(keyway, ctx.token, planned)).attributes).toMatchObject({
      "resource-additions": 0,
      "resource-changes": 1,
      "resource-destructions": 0,
      "execution-details": { mode: "agent", "agent-pool-id": pool.id },
    });

    const confirmed = await e7(workspace.workspaceId, runId);
    expect({ status: confirmed.status, text: confirmed.text }).toEqual({
      status: 200,
      text: "Workspace update completed",
    });
    const applied = await followE6(workspace.workspaceId, runId, "applied");
    expect(applied[applied.length - 1]).toBe("applied");
    const after = await currentState(keyway, ctx.token, workspace.workspaceId);
    const uploaded = keyway.proxy.uploadedStates(runId);
    expect(uploaded).toHaveLength(1);
    expect(after.attributes.serial).toBe(uploaded[0].serial);
    expect(after.attributes.serial).toBeGreaterThan(before.attributes.serial);
    expect(after.attributes.lineage).toBe(before.attributes.lineage);
    // E7 wrote E5's variable to the workspace.
    const vars = await tfe(keyway, "GET", `workspaces/${workspace.workspaceId}/vars`, ctx.token);
    expect(vars.json.data.find((v: Json) => v.attributes.key === "size")?.attributes.value).toBe("2");
  });

  it("a discard of an upgrade still waiting for an agent cancels it; of a planned one discards it", async () => {
    const pool = await createPool(keyway, ctx);
    const first = agentOf(pool);
    const workspace = await appliedWorkspace(pool);
    await stopAgent(first);

    const queued = await e5(workspace.workspaceId, [engineVar("size", "3")]);
    expect(queued.status, JSON.stringify(queued.json)).toBe(200);
    const queuedRun = queued.json.data.id as string;
    const discard = await tfe(keyway, "POST", `runs/${queuedRun}/actions/discard`, ctx.token, {});
    expect(discard.status, JSON.stringify(discard.json)).toBe(202);
    expect(await e6(workspace.workspaceId, queuedRun)).toBe("canceled");

    // A new agent never gets the canceled run's job; it plans the next upgrade.
    agentOf(pool);
    const next = await e5(workspace.workspaceId, [engineVar("size", "4")]);
    expect(next.status, JSON.stringify(next.json)).toBe(200);
    const runId = next.json.data.id as string;
    await followE6(workspace.workspaceId, runId, "planned");
    expect(keyway.proxy.jobsOfRun(queuedRun)).toEqual([]);
    const discarded = await tfe(keyway, "POST", `runs/${runId}/actions/discard`, ctx.token, {});
    expect(discarded.status, JSON.stringify(discarded.json)).toBe(202);
    expect(await e6(workspace.workspaceId, runId)).toBe("discarded");
    expect((await e7(workspace.workspaceId, runId)).status).toBe(409);
  });
});

describe("a rollout of agent workspaces (N15, N19)", () => {
  it("three workspaces, auto-confirm no-changes: the two plans without changes apply, the one with a change waits", async () => {
    const pool = await createPool(keyway, ctx);
    agentOf(pool);
    // Two workspaces whose next plan finds nothing to change, one whose plan changes a resource.
    const [quiet1, quiet2, changing] = [
      await appliedWorkspace(pool, { STAND_IN_NO_CHANGES: "1" }),
      await appliedWorkspace(pool, { STAND_IN_NO_CHANGES: "1" }),
      await appliedWorkspace(pool),
    ];
    const serials = new Map<string, number>();
    for (const ws of [quiet1, quiet2, changing])
      serials.set(ws.workspaceId, (await currentState(keyway, ctx.token, ws.workspaceId)).attributes.serial);

    // Version 1.1.0 (the same configuration, a comment apart) becomes the pin.
    const files = moduleFiles("terraform-data");
    const main = Object.keys(files).find((f) => f.endsWith("main.tf"))!;
    await publishModuleVersion(keyway, ctx.token, ctx.moduleAddress, "1.1.0", {
      ...files,
      [main]: `${files[main]}\n# 1.1.0\n`,
    });
    const module = (await tfe(keyway, "GET", `no-code-modules/${ctx.noCodeModuleId}`, ctx.token)).json.data;
    await movePin(
      keyway,
      ctx.token,
      { id: ctx.noCodeModuleId, registryModuleId: module.relationships["registry-module"].data.id },
      "1.1.0",
    );

    const created = await tfe(keyway, "POST", `no-code-modules/${ctx.noCodeModuleId}/upgrade-rollouts`, ctx.token, {
      data: {
        type: "upgrade-rollouts",
        attributes: { "batch-size": 3, "auto-confirm": "no-changes" },
        relationships: {
          workspaces: { data: [quiet1, quiet2, changing].map((w) => ({ type: "workspaces", id: w.workspaceId })) },
        },
      },
    });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    const rolloutId = created.json.data.id as string;

    const deadline = Date.now() + 90_000;
    let rollout: Json;
    const itemOf = (ws: { workspaceId: string }) =>
      rollout.attributes.items.find((i: Json) => i.workspace === ws.workspaceId);
    for (;;) {
      rollout = (await tfe(keyway, "GET", `upgrade-rollouts/${rolloutId}`, ctx.token)).json.data;
      const statuses = rollout.attributes.items.map((i: Json) => i.status);
      if (statuses.filter((s: string) => s === "applied").length === 2 && statuses.includes("waiting-confirmation"))
        break;
      if (Date.now() > deadline) throw new Error(`rollout: ${JSON.stringify(rollout.attributes)}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(rollout.attributes.status).toBe("waiting-confirmation");
    for (const ws of [quiet1, quiet2]) {
      expect(itemOf(ws)).toMatchObject({
        status: "applied",
        "resource-additions": 0,
        "resource-changes": 0,
        "resource-destructions": 0,
      });
      const state = await currentState(keyway, ctx.token, ws.workspaceId);
      expect(state.attributes.serial).toBeGreaterThan(serials.get(ws.workspaceId)!);
    }
    expect(itemOf(changing)).toMatchObject({ status: "waiting-confirmation", "resource-changes": 1 });
    const waitingRun = itemOf(changing).run as string;
    expect((await tfe(keyway, "GET", `runs/${waitingRun}`, ctx.token)).json.data.attributes.status).toBe("planned");
    // Its workspace still runs 1.0.0 with its old state.
    expect((await currentState(keyway, ctx.token, changing.workspaceId)).attributes.serial).toBe(
      serials.get(changing.workspaceId),
    );

    // Confirmed, it applies too, and the rollout completes.
    const confirm = await tfe(keyway, "POST", `upgrade-rollouts/${rolloutId}/actions/confirm`, ctx.token, {});
    expect(confirm.status, JSON.stringify(confirm.json)).toBe(202);
    await waitForRun(keyway, ctx.token, waitingRun, ["applied"]);
    for (;;) {
      rollout = (await tfe(keyway, "GET", `upgrade-rollouts/${rolloutId}`, ctx.token)).json.data;
      if (rollout.attributes.status === "completed") break;
      if (Date.now() > deadline) throw new Error(`rollout: ${JSON.stringify(rollout.attributes)}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(itemOf(changing).status).toBe("applied");
  });
});
