/**
 * End to end against the real Worker (wrangler, local D1, R2, Durable Objects, Queues), from
 * Node over HTTP (decision N20), with the real agent program `agent/keyway-agent` running the
 * real engine (test/interop/agent/harness.ts: this machine's /usr/local/bin/terraform, or a
 * `tofu`/`terraform` on PATH) on test/fixtures/agent/modules/terraform-data, whose only
 * provider is the built-in `terraform_data`, so it plans and applies offline. After the run
 * applies, what it produced is read as HCP Terraform's clients read it:
 * `current-state-version` and its signed download (the bytes the agent uploaded, their MD5
 * the version's), the outputs (the sensitive one null, its value through
 * `state-version-outputs/:id` for manage-workspaces teams only), `json-output`'s 307 to the
 * engine's own JSON plan, and the plan's and the apply's `log-read-url` read the way go-tfe's
 * LogReader reads them (`limit`/`offset`, STX … ETX), the plan's while it is still growing.
 *
 * Nothing here needs the stand-in engine: terraform shows all of it offline. Without an
 * engine these tests are skipped with that reason; in CI (`CI=true`) a missing engine fails.
 */
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from "vitest";
import { type Json, tfe } from "../../support/client";
import {
  type AgentOrg,
  type AgentProcess,
  agentOrg,
  createAgentWorkspace,
  createPool,
  describeEngineRequiredInCi,
  engineVar,
  engineVersionOf,
  type Keyway,
  NO_ENGINE,
  type Pool,
  realEngine,
  startAgent,
  startWorker,
  waitForRun,
} from "../agent/harness";
import { createUser, unique } from "../console/seed";

const engine = realEngine();

describeEngineRequiredInCi("run data with the real engine (CI)", engine);

/** A team of `org` with `access`, and its token. */
async function teamToken(keyway: Keyway, org: string, access: Record<string, boolean>): Promise<string> {
  const team = await tfe(keyway, "POST", `organizations/${org}/teams`, keyway.adminToken, {
    data: { type: "teams", attributes: { name: unique("team"), "organization-access": access } },
  });
  const token = await tfe(keyway, "POST", `teams/${team.json.data.id}/authentication-token`, keyway.adminToken);
  return token.json.data.attributes.token;
}

/**
 * go-tfe's LogReader: GET the link with `limit` and a growing `offset`; an empty read means
 * "not yet", so it polls again; the byte ETX (0x03) ends the log.
 */
async function readLog(url: string, limit: number, timeout = 60_000): Promise<{ bytes: Buffer; reads: number }> {
  const out: Buffer[] = [];
  let offset = 0;
  let reads = 0;
  const deadline = Date.now() + timeout;
  while (Date.now() < deadline) {
    const u = new URL(url);
    u.searchParams.set("limit", String(limit));
    u.searchParams.set("offset", String(offset));
    const res = await fetch(u);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const bytes = Buffer.from(await res.arrayBuffer());
    reads++;
    expect(bytes.length).toBeLessThanOrEqual(limit);
    out.push(bytes);
    offset += bytes.length;
    if (bytes.length > 0 && bytes[bytes.length - 1] === 0x03) return { bytes: Buffer.concat(out), reads };
    if (bytes.length === 0) await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the log never ended (read ${offset} bytes)`);
}

describe.skipIf(engine === null)(`run data of a real agent run: ${engine ?? NO_ENGINE}`, () => {
  let keyway: Keyway;
  let ctx: AgentOrg;
  let pool: Pool;
  let agent: AgentProcess;

  beforeAll(async () => {
    keyway = await startWorker({ shortThresholds: false });
    ctx = await agentOrg(keyway);
    pool = await createPool(keyway, ctx);
    agent = startAgent(keyway, pool, { engine: engine! });
  }, 120_000);

  afterAll(async () => {
    await agent?.dispose();
    await keyway?.stop();
  });

  it("state, outputs, the JSON plan and the logs, as HCP Terraform's clients read them", async () => {
    onTestFailed(() => {
      console.log(`agent stderr:\n${agent.stderr()}\ncalls:\n${keyway.proxy.requests.join("\n")}`);
    });
    const secret = unique("sensitive-output-value");
    const readTeam = await teamToken(keyway, ctx.org, { "read-workspaces": true });
    const manageTeam = await teamToken(keyway, ctx.org, { "manage-workspaces": true });
    const orgToken = (await tfe(keyway, "POST", `organizations/${ctx.org}/authentication-token`, ctx.token)).json.data
      .attributes.token as string;
    const workspace = await createAgentWorkspace(keyway, ctx, pool, {
      engineVersion: engineVersionOf(engine!),
      autoApply: true,
      vars: [engineVar("name", "alpha"), engineVar("secret", secret, { sensitive: true })],
    });

    // The plan's log, read as it grows (go-tfe polls from the moment the run exists).
    const planned = await tfe(keyway, "GET", `runs/${workspace.runId}/plan`, readTeam);
    expect(planned.status).toBe(200);
    let growing: Promise<{ bytes: Buffer; reads: number }> | undefined;
    for (let i = 0; i < 100 && !growing; i++) {
      const plan = await tfe(keyway, "GET", `plans/${planned.json.data.id}`, readTeam);
      const link = plan.json.data.attributes["log-read-url"];
      if (link) growing = readLog(link, 64);
      else await new Promise((r) => setTimeout(r, 100));
    }
    expect(growing, "the plan's log-read-url").toBeDefined();

    const run = await waitForRun(keyway, ctx.token, workspace.runId, ["applied"]);
    const [planJob, applyJob] = keyway.proxy.jobsOfRun(run.id);
    expect(planJob && applyJob).toBeTruthy();

    // The plan's log: STX, exactly the bytes the agent sent, ETX; read in pieces of 64 bytes.
    const planLog = await growing!;
    const sentPlanLog = keyway.proxy.logs.get(planJob!)!;
    expect(sentPlanLog.toString("utf8")).toContain("Plan: 2 to add, 0 to change, 0 to destroy.");
    expect(planLog.bytes.equals(Buffer.concat([Buffer.from([0x02]), sentPlanLog, Buffer.from([0x03])]))).toBe(true);
    expect(planLog.reads).toBeGreaterThan(sentPlanLog.length / 64);
    // limit/offset address bytes of the framed log; past the end is empty.
    const planLink = (await tfe(keyway, "GET", `plans/${planned.json.data.id}`, readTeam)).json.data.attributes[
      "log-read-url"
    ];
    const slice = new URL(planLink);
    slice.searchParams.set("offset", "1");
    slice.searchParams.set("limit", "10");
    expect(Buffer.from(await (await fetch(slice)).arrayBuffer()).equals(sentPlanLog.subarray(0, 10))).toBe(true);
    slice.searchParams.set("offset", String(sentPlanLog.length + 2));
    expect((await (await fetch(slice)).arrayBuffer()).byteLength).toBe(0);
    slice.searchParams.set("limit", "-1");
    expect((await fetch(slice)).status).toBe(400);

    // The apply's log through the run's apply.
    const apply = await tfe(keyway, "GET", `runs/${run.id}/apply`, readTeam);
    expect(apply.status).toBe(200);
    expect(apply.json.data.attributes.status).toBe("finished");
    const applyLog = await readLog(apply.json.data.attributes["log-read-url"], 1024);
    const sentApplyLog = keyway.proxy.logs.get(applyJob!)!;
    expect(applyLog.bytes.equals(Buffer.concat([Buffer.from([0x02]), sentApplyLog, Buffer.from([0x03])]))).toBe(true);
    expect(sentApplyLog.toString("utf8")).toContain("Apply complete! Resources: 2 added, 0 changed, 0 destroyed.");
    expect(applyLog.bytes.toString("utf8")).not.toContain(secret);

    // json-output: 307 to the engine's own JSON plan, as the agent uploaded it.
    const redirect = await fetch(`${keyway.url}/api/v2/runs/${run.id}/plan/json-output`, {
      headers: { Authorization: `Bearer ${manageTeam}` },
      redirect: "manual",
    });
    expect(redirect.status).toBe(307);
    const followed = await fetch(redirect.headers.get("location")!);
    expect(followed.status).toBe(200);
    expect(followed.headers.get("referrer-policy")).toBe("no-referrer");
    const jsonPlan = Buffer.from(await followed.arrayBuffer());
    expect(jsonPlan.equals(keyway.proxy.jsonPlans.get(planJob!)!)).toBe(true);
    const parsedPlan = JSON.parse(jsonPlan.toString("utf8"));
    expect(parsedPlan.format_version).toMatch(/^1\./);
    expect(parsedPlan.resource_changes.map((c: Json) => [c.address, c.change.actions])).toEqual([
      ["terraform_data.name", ["create"]],
      ["terraform_data.size", ["create"]],
    ]);
    for (const token of [readTeam, orgToken, (await createUser(keyway)).token])
      expect((await tfe(keyway, "GET", `plans/${run.relationships.plan.data.id}/json-output`, token)).status).toBe(404);

    // current-state-version: the state terraform wrote, downloaded byte for byte.
    const uploaded = keyway.proxy.states.filter((s) => s.jobId === applyJob && s.direction === "upload");
    expect(uploaded).toHaveLength(1);
    const stateText = uploaded[0]!.body;
    const state = JSON.parse(stateText);
    const sv = await tfe(keyway, "GET", `workspaces/${workspace.workspaceId}/current-state-version`, manageTeam);
    expect(sv.status).toBe(200);
    expect(sv.json.data.attributes).toMatchObject({
      serial: state.serial,
      lineage: state.lineage,
      md5: createHash("md5").update(stateText).digest("hex"),
      size: Buffer.byteLength(stateText),
      status: "finalized",
    });
    const download = await fetch(sv.json.data.attributes["hosted-state-download-url"]);
    expect(download.status).toBe(200);
    expect(download.headers.get("cache-control")).toBe("no-store");
    expect(download.headers.get("referrer-policy")).toBe("no-referrer");
    const bytes = Buffer.from(await download.arrayBuffer());
    expect(createHash("md5").update(bytes).digest("hex")).toBe(sv.json.data.attributes.md5);
    for (const token of [readTeam, orgToken]) {
      const asReader = await tfe(keyway, "GET", `state-versions/${sv.json.data.id}`, token);
      expect(asReader.status).toBe(200);
      expect(asReader.json.data.attributes["hosted-state-download-url"]).toBeNull();
    }

    // Outputs: values for readers, null for the sensitive one; its value for manage-workspaces teams only.
    const outputs = await tfe(
      keyway,
      "GET",
      `workspaces/${workspace.workspaceId}/current-state-version-outputs`,
      readTeam,
    );
    expect(outputs.status).toBe(200);
    const byName = Object.fromEntries(outputs.json.data.map((o: Json) => [o.attributes.name, o]));
    expect(byName.name.attributes).toMatchObject({ sensitive: false, value: "alpha", type: "string" });
    expect(byName.size.attributes).toMatchObject({ sensitive: false, value: 1, type: "number" });
    expect(byName.secret.attributes).toMatchObject({ sensitive: true, value: null });
    expect(JSON.stringify(outputs.json)).not.toContain(secret);
    const listed = await tfe(keyway, "GET", `state-versions/${sv.json.data.id}/outputs`, orgToken);
    expect(listed.status).toBe(200);
    expect(JSON.stringify(listed.json)).not.toContain(secret);
    const revealed = await tfe(keyway, "GET", `state-version-outputs/${byName.secret.id}`, manageTeam);
    expect(revealed.status).toBe(200);
    expect(revealed.json.data.attributes).toMatchObject({ name: "secret", sensitive: true, value: secret });
    for (const token of [readTeam, orgToken])
      expect((await tfe(keyway, "GET", `state-version-outputs/${byName.secret.id}`, token)).status).toBe(404);
    const plain = await tfe(keyway, "GET", `state-version-outputs/${byName.name.id}`, orgToken);
    expect(plain.json.data.attributes.value).toBe("alpha");
  }, 180_000);
});
