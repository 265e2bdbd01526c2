/**
 * The real Worker, the real `agent/keyway-agent` and the REAL ENGINE (decision N22): this
 * machine image's Terraform 1.11.4 at /usr/local/bin/terraform (or a `tofu`/`terraform` on
 * PATH) plans and applies test/fixtures/agent/modules/terraform-data offline, since its only
 * provider is the built-in `terraform_data`. Outside CI without an engine these tests are
 * skipped with that reason; in CI (`CI=true`) a missing engine fails them, naming it.
 */
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFailed } from "vitest";
import { type Json, tfe } from "../../support/client";
import { unique } from "../console/seed";
import {
  type AgentOrg,
  type AgentProcess,
  addressesOf,
  agentOrg,
  createAgentWorkspace,
  createPool,
  currentState,
  describeEngineRequiredInCi,
  engineVar,
  engineVersionOf,
  envVar,
  HOST_SECRET,
  type Keyway,
  NO_ENGINE,
  type Pool,
  publishModule,
  RecordingProxy,
  readPlan,
  realEngine,
  selfSignedCertificate,
  startAgent,
  startWorker,
  waitForRun,
} from "./harness";

const engine = realEngine();

describeEngineRequiredInCi("real engine (CI)", engine);

describe.skipIf(engine === null)(`real engine: ${engine ?? NO_ENGINE}`, () => {
  let keyway: Keyway;
  let ctx: AgentOrg;
  let pool: Pool;
  let agent: AgentProcess;
  let engineVersion: string;
  /** The plan of the first test's run, for the execution-details test. */
  let firstPlan: Json;

  beforeAll(async () => {
    keyway = await startWorker({ shortThresholds: false });
    ctx = await agentOrg(keyway);
    pool = await createPool(keyway, ctx);
    engineVersion = engineVersionOf(engine!);
    agent = startAgent(keyway, pool, { engine: engine! });
  }, 120_000);

  beforeEach(() => {
    onTestFailed(() => {
      console.log(`agent stderr:\n${agent.stderr()}\ncalls:\n${keyway.proxy.requests.join("\n")}`);
    });
  });

  afterAll(async () => {
    await agent?.dispose();
    await keyway?.stop();
  });

  it("an agent workspace's first run is planned and applied (auto-apply) with the engine's real state and outputs", async () => {
    const secret = unique("sensitive-output-value");
    const workspace = await createAgentWorkspace(keyway, ctx, pool, {
      engineVersion,
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
    // The state Terraform wrote, as the agent uploaded it, and as Keyway recorded it.
    const uploaded = keyway.proxy.uploadedStates(run.id);
    expect(uploaded).toHaveLength(1);
    const state = uploaded[0]!;
    expect(state).toMatchObject({ version: 4, terraform_version: expect.any(String), serial: expect.any(Number) });
    expect(state.lineage).toMatch(/^[0-9a-f-]{36}$/);
    expect(state.resources.map((r: Json) => `${r.type}.${r.name}`).sort()).toEqual([
      "terraform_data.name",
      "terraform_data.size",
    ]);
    expect(state.outputs).toEqual({
      name: { value: "alpha", type: "string" },
      size: { value: 1, type: "number" },
      secret: { value: secret, type: "string", sensitive: true },
    });
    const recorded = await currentState(keyway, ctx.token, workspace.workspaceId);
    expect(recorded.attributes.serial).toBe(state.serial);
    expect(addressesOf(recorded)).toEqual(["terraform_data.name", "terraform_data.size"]);
    expect(recorded.attributes.outputs).toEqual(
      expect.arrayContaining([
        { name: "name", sensitive: false, value: null },
        { name: "size", sensitive: false, value: null },
        { name: "secret", sensitive: true, value: null },
      ]),
    );

    const logs = keyway.proxy.allLogs();
    expect(logs).toContain("Terraform has been successfully initialized!");
    expect(logs).toContain("Apply complete! Resources: 2 added, 0 changed, 0 destroyed.");
    for (const value of [secret, pool.token, HOST_SECRET]) {
      expect(logs).not.toContain(value);
      expect(agent.stderr()).not.toContain(value);
    }
    firstPlan = plan;
  });

  it("the plan's execution-details name the agent, its pool and the engine that ran it (N19)", () => {
    expect(firstPlan, "the first test's plan").toBeDefined();
    expect(firstPlan.attributes["execution-details"]).toMatchObject({
      mode: "agent",
      "agent-id": expect.stringMatching(/^agent-/),
      "agent-name": agent.name,
      "agent-pool-id": pool.id,
      "engine-name": path.basename(engine!).includes("tofu") ? "tofu" : "terraform",
      "engine-version": engineVersion,
    });
  });

  it("the plan's execution-details carry agent-pool-name (N19)", () => {
    expect(firstPlan.attributes["execution-details"]["agent-pool-name"]).toBe(pool.name);
  });

  it("without auto-apply the run waits at planned, and actions/apply sends the apply job", async () => {
    const workspace = await createAgentWorkspace(keyway, ctx, pool, {
      engineVersion,
      autoApply: false,
      vars: [engineVar("name", "beta"), engineVar("secret", unique("s"), { sensitive: true })],
    });
    await waitForRun(keyway, ctx.token, workspace.runId, ["planned"]);
    expect((await tfe(keyway, "POST", `runs/${workspace.runId}/actions/apply`, ctx.token, {})).status).toBe(202);
    await waitForRun(keyway, ctx.token, workspace.runId, ["applied"]);
    const recorded = await currentState(keyway, ctx.token, workspace.workspaceId);
    expect(addressesOf(recorded)).toEqual(["terraform_data.name", "terraform_data.size"]);
  });

  // N19: E5's upgrade of an agent workspace is planned by an agent (E5 answers `pending`, E6
  // follows the run to `planned`), and E7 sends the apply job.
  it("a second run (an upgrade with a new value) changes one resource and keeps the lineage", async () => {
    const workspace = await createAgentWorkspace(keyway, ctx, pool, {
      engineVersion,
      autoApply: true,
      vars: [engineVar("name", "gamma"), engineVar("secret", unique("s"), { sensitive: true })],
    });
    const firstRun = await waitForRun(keyway, ctx.token, workspace.runId, ["applied"]);
    const first = keyway.proxy.uploadedStates(firstRun.id)[0]!;

    const path = `no-code-modules/${ctx.noCodeModuleId}/workspaces/${workspace.workspaceId}/upgrade`;
    const upgrade = await tfe(keyway, "POST", path, ctx.token, {
      data: { type: "workspaces", relationships: { vars: { data: [engineVar("size", "2")] } } },
    });
    expect(upgrade.status, JSON.stringify(upgrade.json)).toBe(200);
    expect(upgrade.json.data.attributes.status).toBe("pending");
    const runId = upgrade.json.data.id as string;
    const planned = await waitForRun(keyway, ctx.token, runId, ["planned"]);
    expect((await readPlan(keyway, ctx.token, planned)).attributes).toMatchObject({
      "resource-additions": 0,
      "resource-changes": 1,
      "resource-destructions": 0,
    });
    // E7 confirms the upgrade (its answer is plain text, not JSON:API).
    const confirmed = await tfe(keyway, "POST", `${path}/${runId}`, ctx.token);
    expect(confirmed.status, confirmed.text).toBe(200);
    const secondRun = await waitForRun(keyway, ctx.token, runId, ["applied"]);

    // Both jobs of the second run were handed exactly the state the first run's apply uploaded.
    for (const jobId of keyway.proxy.jobsOfRun(secondRun.id)) {
      const handed = keyway.proxy.states.filter((s) => s.jobId === jobId && s.direction === "download");
      expect(handed.map((s) => JSON.parse(s.body))).toEqual([first]);
    }
    const second = keyway.proxy.uploadedStates(secondRun.id)[0]!;
    expect(second.lineage).toBe(first.lineage);
    expect(second.serial).toBeGreaterThan(first.serial);
    expect(second.outputs.size).toEqual({ value: 2, type: "number" });
    const ids = (state: Json) =>
      Object.fromEntries(state.resources.map((r: Json) => [r.name, r.instances[0].attributes.id]));
    // terraform_data.size changed in place; terraform_data.name was left alone.
    expect(ids(second)).toEqual(ids(first));
    expect(second.resources.find((r: Json) => r.name === "size").instances[0].attributes.input.value.size).toBe(2);
    expect((await currentState(keyway, ctx.token, workspace.workspaceId)).attributes.serial).toBe(second.serial);
  });

  it("a module calling a module of the organization's private registry: the engine's init fetches it through Keyway with the job's credential", async () => {
    // Terraform reads module registries over https only: a proxy with a self-signed
    // certificate for 127.0.0.1 stands in front of the Worker (on the same port, plain http
    // for the download link, whose origin the Worker takes from the request), trusted by the
    // agent (NODE_EXTRA_CA_CERTS) and by the engine (SSL_CERT_FILE, a workspace env variable).
    const tls = selfSignedCertificate();
    const proxy = await RecordingProxy.start(keyway.url, tls);
    const host = new URL(proxy.url).host;
    const source = `${host}/${ctx.moduleAddress}`;
    const caller = await publishModule(keyway, ctx.org, ctx.token, {
      "main.tf": [
        'terraform {\n  required_providers {\n    terraform = {\n      source = "terraform.io/builtin/terraform"\n    }\n  }\n}\n',
        `module "child" {\n  source  = "${source}"\n  version = "1.0.0"\n  name    = "from-the-caller"\n  secret  = "not-so-secret"\n}\n`,
        'resource "terraform_data" "caller" {\n  input = module.child.name\n}\n',
        'output "child_name" {\n  value = module.child.name\n}\n',
      ].join("\n"),
    });
    const tlsPool = await createPool(keyway, ctx);
    const tlsAgent = startAgent(keyway, tlsPool, {
      engine: engine!,
      address: proxy.url,
      env: { NODE_EXTRA_CA_CERTS: tls.certFile },
    });
    try {
      const workspace = await createAgentWorkspace(keyway, { ...ctx, ...caller }, tlsPool, {
        engineVersion,
        autoApply: true,
        vars: [envVar("SSL_CERT_FILE", tls.certFile)],
      });
      const run = await waitForRun(keyway, ctx.token, workspace.runId, ["applied"]).catch((error) => {
        console.log(
          `agent stderr:\n${tlsAgent.stderr()}\nlogs:\n${proxy.allLogs()}\ncalls:\n${proxy.requests.join("\n")}`,
        );
        throw error;
      });
      expect(proxy.allLogs()).toContain(`Downloading ${source} 1.0.0 for child...`);
      const state = proxy.uploadedStates(run.id)[0]!;
      const addresses = state.resources.map((r: Json) => `${r.module ? `${r.module}.` : ""}${r.type}.${r.name}`);
      expect(addresses.sort()).toEqual([
        "module.child.terraform_data.name",
        "module.child.terraform_data.size",
        "terraform_data.caller",
      ]);
      expect(state.outputs.child_name).toEqual({ value: "from-the-caller", type: "string" });
    } finally {
      await tlsAgent.dispose();
      await proxy.stop();
      tls.dispose();
    }
  });

  it("cancel mid-apply (N19a): Terraform, interrupted during a provisioner, writes its state; the agent uploads it and the run is canceled", {
    timeout: 120_000,
  }, async () => {
    // terraform_data.first is applied before terraform_data.slow, whose local-exec provisioner
    // sleeps: the cancel arrives while Terraform waits for it.
    const slow = await publishModule(keyway, ctx.org, ctx.token, {
      "main.tf": [
        'terraform {\n  required_providers {\n    terraform = {\n      source = "terraform.io/builtin/terraform"\n    }\n  }\n}\n',
        'resource "terraform_data" "first" {\n  input = "first"\n}\n',
        'resource "terraform_data" "slow" {\n  depends_on = [terraform_data.first]\n  input      = "slow"\n  provisioner "local-exec" {\n    command = "sleep 90"\n  }\n}\n',
      ].join("\n"),
    });
    const workspace = await createAgentWorkspace(keyway, { ...ctx, ...slow }, pool, {
      engineVersion,
      autoApply: true,
      vars: [],
    });
    const provisioning = async () => {
      const deadline = Date.now() + 60_000;
      while (Date.now() < deadline) {
        if (keyway.proxy.allLogs().includes('"type":"provision_start"')) return;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      throw new Error("Terraform never started the provisioner");
    };
    await provisioning();
    expect((await tfe(keyway, "POST", `runs/${workspace.runId}/actions/cancel`, ctx.token, {})).status).toBe(202);
    await waitForRun(keyway, ctx.token, workspace.runId, ["canceled"], 60_000);
    // The state Terraform wrote on its way out holds what it had applied: terraform_data.first.
    const uploaded = keyway.proxy.uploadedStates(workspace.runId);
    expect(uploaded).toHaveLength(1);
    expect(uploaded[0]!.resources.map((r: Json) => `${r.type}.${r.name}`)).toContain("terraform_data.first");
    const recorded = await currentState(keyway, ctx.token, workspace.workspaceId);
    expect(recorded.attributes.serial).toBe(uploaded[0]!.serial);
    expect(addressesOf(recorded)).toContain("terraform_data.first");
    expect(agent.stderr()).toContain("canceled; interrupting the engine");
  });
});
