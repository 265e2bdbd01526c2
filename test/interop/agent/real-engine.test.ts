/**
 * The real Worker, the real `agent/keyway-agent` and the REAL ENGINE (decision N22): this
 * machine image's Terraform 1.11.4 at /usr/local/bin/terraform (or a `tofu`/`terraform` on
 * PATH) plans and applies test/fixtures/agent/modules/terraform-data offline, since its only
 * provider is the built-in `terraform_data`. Outside CI without an engine these tests are
 * skipped with that reason; in CI (`CI=true`) a missing engine fails them, naming it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tfe, unique } from "../console/seed";
import {
  type AgentOrg,
  type AgentProcess,
  agentOrg,
  createAgentWorkspace,
  createPool,
  currentState,
  engineVar,
  HOST_SECRET,
  type Json,
  type Keyway,
  type Pool,
  readPlan,
  realEngine,
  startAgent,
  startWorker,
  waitForRun,
} from "./harness";

const engine = realEngine();
const MISSING = "no engine binary: /usr/local/bin/terraform is missing and neither tofu nor terraform is on PATH";

describe.runIf(engine === null && process.env.CI === "true")("real engine (CI)", () => {
  it("is present: CI requires the real engine (N22)", () => {
    expect.fail(MISSING);
  });
});

describe.skipIf(engine === null)(`real engine: ${engine ?? MISSING}`, () => {
  let keyway: Keyway;
  let ctx: AgentOrg;
  let pool: Pool;
  let agent: AgentProcess;

  beforeAll(async () => {
    keyway = await startWorker();
    ctx = await agentOrg(keyway);
    pool = await createPool(keyway, ctx);
    agent = startAgent(keyway, pool, { engine: engine! });
  }, 120_000);

  afterAll(async () => {
    await agent?.dispose();
    await keyway?.stop();
  });

  const outputsByName = (outputs: Json[]) => Object.fromEntries(outputs.map((o) => [o.attributes.name, o.attributes]));

  it("an agent workspace's first run is planned and applied (auto-apply) with the engine's real state and outputs", async () => {
    const secret = unique("sensitive-output-value");
    const workspace = await createAgentWorkspace(keyway, ctx, pool, {
      autoApply: true,
      vars: [
        engineVar("name", "alpha"),
        engineVar("secret", secret, { sensitive: true }),
        engineVar("labels", '{ team = "platform" }', { hcl: true }),
      ],
    });
    const run = await waitForRun(keyway, ctx.token, workspace.runId, ["applied"]);
    const plan = await readPlan(keyway, ctx.token, run);
    expect(plan.attributes).toMatchObject({
      "resource-additions": 2,
      "resource-changes": 0,
      "resource-destructions": 0,
    });
    expect(plan.attributes["execution-details"]).toMatchObject({
      mode: "agent",
      "agent-name": agent.name,
      "agent-pool-id": pool.id,
      "agent-pool-name": pool.name,
    });

    const state = await currentState(keyway, ctx.token, workspace.workspaceId);
    expect(state.raw).toMatchObject({ version: 4, terraform_version: expect.any(String) });
    expect(state.version.attributes).toMatchObject({ serial: state.raw.serial, lineage: state.raw.lineage });
    expect(state.raw.resources.map((r: Json) => `${r.type}.${r.name}`).sort()).toEqual([
      "terraform_data.name",
      "terraform_data.size",
    ]);
    expect(state.raw.outputs.secret).toEqual({ value: secret, type: "string", sensitive: true });
    const outputs = outputsByName(state.outputs);
    expect(outputs.name).toMatchObject({ value: "alpha", sensitive: false });
    expect(outputs.size).toMatchObject({ value: 1, sensitive: false });
    expect(outputs.secret).toMatchObject({ value: null, sensitive: true });

    const logs = keyway.proxy.allLogs();
    expect(logs).toContain("Terraform has been successfully initialized!");
    expect(logs).toContain("Apply complete! Resources: 2 added, 0 changed, 0 destroyed.");
    for (const value of [secret, pool.token, HOST_SECRET]) {
      expect(logs).not.toContain(value);
      expect(agent.stderr()).not.toContain(value);
    }
  });

  it("without auto-apply the run waits at planned, and actions/apply sends the apply job", async () => {
    const workspace = await createAgentWorkspace(keyway, ctx, pool, {
      autoApply: false,
      vars: [engineVar("name", "beta"), engineVar("secret", unique("s"), { sensitive: true })],
    });
    await waitForRun(keyway, ctx.token, workspace.runId, ["planned"]);
    expect((await tfe(keyway, "POST", `runs/${workspace.runId}/actions/apply`, ctx.token, {})).status).toBe(202);
    await waitForRun(keyway, ctx.token, workspace.runId, ["applied"]);
    const state = await currentState(keyway, ctx.token, workspace.workspaceId);
    expect(outputsByName(state.outputs).name).toMatchObject({ value: "beta" });
  });

  it("a second run (an upgrade with a new value) changes one resource and keeps the lineage", async () => {
    const workspace = await createAgentWorkspace(keyway, ctx, pool, {
      autoApply: true,
      vars: [engineVar("name", "gamma"), engineVar("secret", unique("s"), { sensitive: true })],
    });
    await waitForRun(keyway, ctx.token, workspace.runId, ["applied"]);
    const first = await currentState(keyway, ctx.token, workspace.workspaceId);

    const path = `no-code-modules/${ctx.noCodeModuleId}/workspaces/${workspace.workspaceId}/upgrade`;
    const upgrade = await tfe(keyway, "POST", path, ctx.token, {
      data: { type: "workspaces", relationships: { vars: { data: [engineVar("size", "2")] } } },
    });
    expect(upgrade.status, JSON.stringify(upgrade.json)).toBe(200);
    const runId = upgrade.json.data.id as string;
    const planned = await waitForRun(keyway, ctx.token, runId, ["planned"]);
    expect((await readPlan(keyway, ctx.token, planned)).attributes).toMatchObject({
      "resource-additions": 0,
      "resource-changes": 1,
      "resource-destructions": 0,
    });
    expect((await tfe(keyway, "POST", `${path}/${runId}`, ctx.token)).status).toBe(200);
    await waitForRun(keyway, ctx.token, runId, ["applied"]);

    const second = await currentState(keyway, ctx.token, workspace.workspaceId);
    expect(second.raw.lineage).toBe(first.raw.lineage);
    expect(second.raw.serial).toBeGreaterThan(first.raw.serial);
    expect(outputsByName(second.outputs).size).toMatchObject({ value: 2 });
    const ids = (state: Json) =>
      Object.fromEntries(state.raw.resources.map((r: Json) => [r.name, r.instances[0].attributes.id]));
    // terraform_data.size changed in place; terraform_data.name was left alone.
    expect(ids(second)).toEqual(ids(first));
  });
});
