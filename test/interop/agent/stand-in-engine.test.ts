/**
 * The real Worker and the real `agent/keyway-agent`, driving the STAND-IN ENGINE
 * (test/fixtures/agent/stand-in-engine.mjs), for what a real engine cannot show offline
 * (decision N22): exactly how the agent calls the engine and with which environment, a
 * registry provider's lock file, and signals and failures at exact points (N21). The runs
 * themselves go through the public API; real-engine.test.ts runs the real `terraform`.
 *
 * Each test has its own agent pool, so its jobs go only to its own agent.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it, onTestFailed } from "vitest";
import { tfe } from "../../support/client";
import { unique } from "../console/seed";
import {
  AGENT_PROGRAM,
  type AgentOrg,
  type AgentProcess,
  addressesOf,
  agentWorld,
  createAgentWorkspace,
  createPool,
  currentState,
  engineVar,
  envVar,
  HOST_SECRET,
  type Keyway,
  listAgents,
  type Pool,
  readPlan,
  standInEngine,
  startAgent,
  THRESHOLDS,
  waitForPause,
  waitForRun,
} from "./harness";

let keyway: Keyway;
let ctx: AgentOrg;
const cleanups = agentWorld({ shortThresholds: true }, (world) => {
  ({ keyway, ctx } = world);
});

/** One scenario: a pool, an agent on the stand-in engine, and an agent workspace (its first run queued). */
async function scenario(options: {
  autoApply: boolean;
  env?: Record<string, string>;
  agentArgs?: string[];
  drainSeconds?: number;
  standInCase?: string;
  startAgentFirst?: boolean;
}) {
  const pool = await createPool(keyway, ctx);
  const record = standInEngine();
  cleanups.push(() => record.dispose());
  const secret = unique("sensitive-variable-value");
  const envSecret = unique("sensitive-env-value");
  const agent = startAgent(keyway, pool, {
    engine: record.engine,
    args: options.agentArgs,
    drainSeconds: options.drainSeconds,
  });
  cleanups.push(() => agent.dispose());
  // On a failure, the agent's own account of what happened (it never holds a secret).
  onTestFailed(() => {
    console.log(`agent ${agent.name} stderr:\n${agent.stderr()}`);
    console.log(`calls:\n${keyway.proxy.requests.slice(-30).join("\n")}`);
    console.log(
      `stand-in record:\n${record
        .read()
        .map((r) => `${r.event} ${r.argv?.join(" ") ?? r.command}`)
        .join("\n")}`,
    );
  });
  const vars = [
    engineVar("name", "alpha"),
    engineVar("secret", secret, { sensitive: true }),
    engineVar("labels", '{ team = "platform" }', { hcl: true }),
    envVar("STAND_IN_SECRET_ENV", envSecret, true),
    ...Object.entries({ STAND_IN_CASE: options.standInCase ?? "terraform-data", ...options.env }).map(([k, v]) =>
      envVar(k, v),
    ),
  ];
  const workspace = await createAgentWorkspace(keyway, ctx, pool, { autoApply: options.autoApply, vars });
  return { pool, record, secret, envSecret, agent, workspace };
}

/** Nothing sensitive in the agent's stderr or in the log bytes it sent (N21). */
function expectNoSecrets(agent: AgentProcess, pool: Pool, values: string[]) {
  const logs = keyway.proxy.allLogs();
  for (const value of [...values, pool.token, HOST_SECRET]) {
    expect(agent.stderr(), "agent stderr").not.toContain(value);
    expect(logs, "run logs").not.toContain(value);
  }
}

async function agentStatus(pool: Pool, name: string): Promise<string | undefined> {
  const agents = await listAgents(keyway, ctx.token, pool.id);
  return agents.find((a) => a.attributes.name === name)?.attributes.status;
}

describe("stand-in engine: how the agent runs the engine (N21)", () => {
  it("runs exactly N21's command forms, with the variable files, an allow-listed environment and the registry credential", async () => {
    const { pool, record, secret, envSecret, agent, workspace } = await scenario({
      autoApply: true,
      env: { STAND_IN_REGISTRY_MODULE: ctx.moduleAddress },
    });
    const run = await waitForRun(keyway, ctx.token, workspace.runId, ["applied"]);

    const calls = record.read().filter((r) => r.event === "invoke");
    expect(calls.map((c) => c.argv)).toEqual([
      ["version", "-json"],
      ["init", "-input=false", "-no-color"],
      [
        "plan",
        "-input=false",
        "-no-color",
        "-json",
        "-var-file=keyway.tfvars.json",
        "-var-file=keyway.tfvars",
        "-out=keyway.tfplan",
      ],
      ["show", "-json", "keyway.tfplan"],
      ["init", "-input=false", "-no-color", "-lockfile=readonly"],
      ["apply", "-input=false", "-no-color", "-json", "keyway.tfplan"],
    ]);
    const [, planInit, plan, , applyInit] = calls;
    // A fresh directory per job, holding the module, the override, the variables and the credential.
    expect(planInit!.cwd).not.toBe(applyInit!.cwd);
    expect(planInit!.files).toEqual(
      expect.arrayContaining(["main.tf", "zzz_keyway_override.tf", "keyway.tfvars.json", "keyway.tfvars"]),
    );
    expect(planInit!.files).not.toContain("terraform.tfstate"); // the first run has no state
    expect(applyInit!.files).toContain("keyway.tfplan");
    expect(JSON.parse(plan!.tfvars!.json!)).toEqual({ name: "alpha", secret });
    expect(plan!.tfvars!.hcl).toBe('labels = { team = "platform" }\n');

    // Keyway's registry is the address the agent reached it at, 127.0.0.1:<port> (the proxy
    // forwards the Host header unchanged), a host with a port: a CLI configuration file, not TF_TOKEN_.
    const host = new URL(keyway.proxy.url).host;
    for (const call of calls.slice(1)) {
      const env = call.env!;
      expect(Object.keys(env).sort()).toEqual(
        [
          "HOME",
          "PATH",
          "STAND_IN_CASE",
          "STAND_IN_REGISTRY_MODULE",
          "STAND_IN_SECRET_ENV",
          "TF_CLI_CONFIG_FILE",
          "TF_INPUT",
          "TF_IN_AUTOMATION",
          "TMPDIR",
        ].sort(),
      );
      expect(env).toMatchObject({
        HOME: call.cwd,
        TF_IN_AUTOMATION: "1",
        TF_INPUT: "0",
        STAND_IN_SECRET_ENV: envSecret,
      });
      expect(env.TF_CLI_CONFIG_FILE).toBe(`${call.cwd}/keyway-cli.tfrc`);
      expect(call.cliConfig).toMatch(
        new RegExp(`^credentials "${host.replace(".", "\\.")}" \\{\\n  token = "[^"]+"\\n\\}\\n$`),
      );
      expect(call.cliConfig).not.toContain(pool.token);
      expect(Object.values(env).join("\n")).not.toContain(pool.token);
    }
    // With that credential, each job's init could read the organization's module registry.
    expect(record.read().filter((r) => r.event === "registry")).toEqual([
      expect.objectContaining({ status: 200, versions: ["1.0.0"] }),
      expect.objectContaining({ status: 200, versions: ["1.0.0"] }),
    ]);
    // `version -json` runs before any job: the allow-list alone, no run variables, no credential.
    expect(Object.keys(calls[0]!.env!).sort()).toEqual(["HOME", "PATH", "TF_INPUT", "TF_IN_AUTOMATION"]);
    // The agent's own environment stays out, KEYWAY_* names first of all.
    for (const call of calls) {
      expect(Object.keys(call.env!).filter((k) => k.startsWith("KEYWAY_"))).toEqual([]);
      expect(Object.values(call.env!)).not.toContain(HOST_SECRET);
    }

    const planDoc = await readPlan(keyway, ctx.token, run);
    expect(planDoc.attributes).toMatchObject({ "resource-additions": 2, "resource-changes": 0 });
    expect(planDoc.attributes["execution-details"]).toMatchObject({
      mode: "agent",
      "agent-name": agent.name,
      "agent-pool-id": pool.id,
    });
    const state = await currentState(keyway, ctx.token, workspace.workspaceId);
    expect(state.attributes.serial).toBeGreaterThanOrEqual(1);
    expect(addressesOf(state)).toEqual(["terraform_data.name", "terraform_data.size"]);
    expect(state.attributes.outputs).toEqual(
      expect.arrayContaining([{ name: "secret", sensitive: true, value: null }]),
    );
    const logs = keyway.proxy.allLogs();
    expect(logs).toContain('"type":"change_summary"');
    expect(logs).toContain("Apply complete! Resources: 2 added, 0 changed, 0 destroyed.");
    expectNoSecrets(agent, pool, [secret, envSecret]);

    // An idle agent exits at once on SIGTERM, with 0, and reads `exited`.
    agent.child.kill("SIGTERM");
    expect(await agent.exited).toEqual({ code: 0, signal: null });
    expect(await agentStatus(pool, agent.name)).toBe("exited");
    expect(readdirSync(agent.workdir).filter((f) => f.startsWith("job-"))).toEqual([]);
  });

  it("a registry provider's lock file goes from the plan job to the apply job, each on its own --single agent", async () => {
    const { pool, record, agent, workspace } = await scenario({
      autoApply: false,
      standInCase: "provider-random",
      agentArgs: ["--single"],
    });
    const run = await waitForRun(keyway, ctx.token, workspace.runId, ["planned"]);
    expect(await agent.exited).toEqual({ code: 0, signal: null }); // --single: one job, then exit
    expect((await readPlan(keyway, ctx.token, run)).attributes["resource-additions"]).toBe(1);

    const second = startAgent(keyway, pool, { engine: record.engine, args: ["--single"] });
    cleanups.push(() => second.dispose());
    expect((await tfe(keyway, "POST", `runs/${workspace.runId}/actions/apply`, ctx.token, {})).status).toBe(202);
    await waitForRun(keyway, ctx.token, workspace.runId, ["applied"]);
    expect(await second.exited).toEqual({ code: 0, signal: null });

    // The stand-in, like the engines, refuses an apply whose lock file differs from the plan's.
    const applyInit = record.read().find((r) => r.argv?.includes("-lockfile=readonly"));
    expect(applyInit!.files).toContain(".terraform.lock.hcl");
    expect(addressesOf(await currentState(keyway, ctx.token, workspace.workspaceId))).toEqual(["random_pet.name"]);
  });

  it("a failing apply still records the state the engine wrote", async () => {
    const { pool, secret, envSecret, agent, workspace } = await scenario({
      autoApply: true,
      env: { STAND_IN_FAIL_APPLY: "1" },
    });
    const run = await waitForRun(keyway, ctx.token, workspace.runId, ["errored"]);
    expect(run.attributes["error-message"]).toBe("terraform apply exited with status 1");
    // The engine wrote one resource before it failed: that state is the workspace's now.
    expect(addressesOf(await currentState(keyway, ctx.token, workspace.workspaceId))).toHaveLength(1);
    expect(keyway.proxy.allLogs()).toContain("local-exec provisioner error");
    expectNoSecrets(agent, pool, [secret, envSecret]);
  });
});

describe("stand-in engine: signals (N21)", () => {
  it("SIGTERM mid-plan: the plan finishes and uploads (planned), then the agent reports exited and exits 0", async () => {
    const { pool, record, agent, workspace } = await scenario({ autoApply: false, env: { STAND_IN_PAUSE: "plan:3" } });
    await waitForPause(record, "plan");
    agent.child.kill("SIGTERM");
    await waitForRun(keyway, ctx.token, workspace.runId, ["planned"]);
    expect(await agent.exited).toEqual({ code: 0, signal: null });
    expect(await agentStatus(pool, agent.name)).toBe("exited");
    expect(agent.stderr()).toContain("SIGTERM");
  });

  it("a second SIGTERM mid-apply interrupts the engine: the run errors with N21's message and the partial state is recorded", async () => {
    const { pool, record, secret, envSecret, agent, workspace } = await scenario({
      autoApply: true,
      env: { STAND_IN_PAUSE: "apply:60" },
    });
    await waitForPause(record, "apply");
    agent.child.kill("SIGTERM");
    await new Promise((resolve) => setTimeout(resolve, 300));
    agent.child.kill("SIGTERM");
    const run = await waitForRun(keyway, ctx.token, workspace.runId, ["errored"]);
    expect(run.attributes["error-message"]).toBe("agent stopped: SIGTERM");
    expect(await agent.exited).toEqual({ code: 0, signal: null });
    // The one resource applied before the interrupt.
    expect(addressesOf(await currentState(keyway, ctx.token, workspace.workspaceId))).toHaveLength(1);
    expect(keyway.proxy.allLogs()).toContain("Interrupt received");
    expect(readdirSync(agent.workdir).filter((f) => f.startsWith("job-"))).toEqual([]);
    expect(await agentStatus(pool, agent.name)).toBe("exited");
    expectNoSecrets(agent, pool, [secret, envSecret]);
  });

  it("after one SIGTERM the drain time (KEYWAY_AGENT_DRAIN_SECONDS) interrupts a long apply as a second SIGTERM does", async () => {
    const { record, agent, workspace } = await scenario({
      autoApply: true,
      drainSeconds: 1,
      env: { STAND_IN_PAUSE: "apply:60" },
    });
    await waitForPause(record, "apply");
    agent.child.kill("SIGTERM");
    const run = await waitForRun(keyway, ctx.token, workspace.runId, ["errored"], 20_000);
    expect(run.attributes["error-message"]).toBe("agent stopped: SIGTERM");
    expect(await agent.exited).toEqual({ code: 0, signal: null });
    expect(addressesOf(await currentState(keyway, ctx.token, workspace.workspaceId))).toHaveLength(1);
  });

  it("an agent restarted after a kill mid-apply first uploads the state the engine had written, then ends that job", async () => {
    const { pool, record, agent, workspace } = await scenario({ autoApply: true, env: { STAND_IN_PAUSE: "apply:60" } });
    const paused = await waitForPause(record, "apply");
    cleanups.push(() => {
      try {
        process.kill(paused.pid, "SIGKILL");
      } catch {}
    });
    agent.child.kill("SIGKILL");
    await agent.exited;
    // The same work directory: the killed agent's job directory and its job record are still there.
    const restarted = startAgent(keyway, pool, {
      engine: record.engine,
      env: { KEYWAY_AGENT_WORKDIR: agent.workdir },
    });
    cleanups.push(() => restarted.dispose());
    const run = await waitForRun(keyway, ctx.token, workspace.runId, ["errored"]);
    expect(run.attributes["error-message"]).toBe("the agent was restarted while this job ran");
    expect(addressesOf(await currentState(keyway, ctx.token, workspace.workspaceId))).toHaveLength(1);
    expect(restarted.stderr()).toContain("uploaded the state a stopped agent left");
    expect(readdirSync(agent.workdir).filter((f) => f.startsWith("job-"))).toEqual([]);
  });

  it("deleting the agent mid-plan ends its session: the agent interrupts the engine and exits 1, the run is canceled", async () => {
    const { pool, record, agent, workspace } = await scenario({ autoApply: false, env: { STAND_IN_PAUSE: "plan:60" } });
    const paused = await waitForPause(record, "plan");
    const listed = (await listAgents(keyway, ctx.token, pool.id)).find((a) => a.attributes.name === agent.name);
    expect((await tfe(keyway, "DELETE", `agents/${listed.id}`, ctx.token)).status).toBe(204);
    await waitForRun(keyway, ctx.token, workspace.runId, ["canceled"]);
    // Its next ping (within 11 s) answers 401: the agent stops the engine and exits 1 (N17, N21).
    expect(await agent.exited).toEqual({ code: 1, signal: null });
    expect(agent.stderr()).toContain("Keyway ended this agent's session");
    expect(() => process.kill(paused.pid, 0)).toThrow(); // the engine is gone
    expect(readdirSync(agent.workdir).filter((f) => f.startsWith("job-"))).toEqual([]);
  });

  it("SIGKILL mid-plan: the run errors naming the agent within the errored threshold + 15 s", {
    timeout: 90_000,
  }, async () => {
    const { record, agent, workspace } = await scenario({ autoApply: false, env: { STAND_IN_PAUSE: "plan:120" } });
    const paused = await waitForPause(record, "plan");
    // The engine runs in its own process group, so it outlives a killed agent: end it too.
    cleanups.push(() => {
      try {
        process.kill(paused.pid, "SIGKILL");
      } catch {}
    });
    const killedAt = Date.now();
    agent.child.kill("SIGKILL");
    const run = await waitForRun(
      keyway,
      ctx.token,
      workspace.runId,
      ["errored"],
      (THRESHOLDS.erroredAfter + 15 + 5) * 1000,
    );
    expect(Date.now() - killedAt).toBeLessThanOrEqual((THRESHOLDS.erroredAfter + 15) * 1000);
    expect(run.attributes["error-message"]).toBe(`agent ${agent.name} stopped responding`);
  });
});

describe("the agent program Keyway serves (N21)", () => {
  it("GET /api/agent/v1/agent.mjs is agent/keyway-agent byte for byte, with its SHA-256, and runs", async () => {
    const res = await fetch(`${keyway.url}/api/agent/v1/agent.mjs`);
    expect(res.status).toBe(200);
    const served = Buffer.from(await res.arrayBuffer());
    expect(served.equals(readFileSync(AGENT_PROGRAM))).toBe(true);
    expect(res.headers.get("keyway-agent-sha256")).toBe(createHash("sha256").update(served).digest("hex"));
    // Saved under its served name, it runs as it is (Node 22, no package.json beside it).
    const dir = mkdtempSync(path.join(tmpdir(), "keyway-agent-served-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(path.join(dir, "agent.mjs"), served);
    const printed = execFileSync(process.execPath, [path.join(dir, "agent.mjs"), "--version"], { encoding: "utf8" });
    expect(printed.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });
});
