/**
 * End to end against the real Worker (wrangler, local D1, R2, Durable Objects, Queues),
 * from Node over HTTP (decision N20): an agent run driven through the agent protocol
 * (register → poll → start → log and JSON plan → finish → the apply job uploads a state →
 * finish), then, as HCP Terraform's clients read it: `current-state-version-outputs` shows
 * the plain outputs and null for the sensitive one; a manage-workspaces team reads the
 * sensitive value through `state-version-outputs/:id`, a read-workspaces team cannot; the
 * downloaded state's MD5 is the version's; the plan's log is read the way go-tfe's log
 * reader reads it (growing offset until ETX); `json-output` redirects to the JSON plan.
 *
 * The agent here is protocol-level (this test drives the API, not the engine); the agent
 * program's own end-to-end tests run `agent/keyway-agent` with an engine.
 */
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type RunningKeyway, startKeyway } from "../../support/worker";
import { type Api, createOrg, createUser, noCodeModule, tfe, unique } from "../console/seed";

let keyway: RunningKeyway;
let api: Api;

beforeAll(async () => {
  keyway = await startKeyway();
  api = { url: keyway.url, adminToken: keyway.adminToken };
}, 120_000);

afterAll(async () => {
  await keyway?.stop();
});

/** A call of /api/agent/v1 with a bearer credential and, for session calls, the agent's headers. */
async function agent(
  method: string,
  path: string,
  token: string,
  options: { session?: { agentId: string; secret: string }; body?: string | object } = {},
) {
  const headers: Record<string, string> = { Authorization: `Bearer ${token}` };
  if (options.session) {
    headers["Keyway-Agent-Id"] = options.session.agentId;
    headers["Keyway-Agent-Session"] = options.session.secret;
  }
  let body: string | undefined;
  if (typeof options.body === "string") body = options.body;
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers["Content-Type"] = "application/json";
  }
  const res = await fetch(`${api.url}/api/agent/v1/${path}`, { method, headers, body });
  const text = await res.text();
  // biome-ignore lint/suspicious/noExplicitAny: test assertions walk arbitrary JSON
  let json: any = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {}
  return { status: res.status, json, text };
}

/** A team of `org` with `access`, and its token. */
async function teamToken(org: string, access: Record<string, boolean>): Promise<string> {
  const team = await tfe(api, "POST", `organizations/${org}/teams`, api.adminToken, {
    data: { type: "teams", attributes: { name: unique("team"), "organization-access": access } },
  });
  const token = await tfe(api, "POST", `teams/${team.json.data.id}/authentication-token`, api.adminToken);
  return token.json.data.attributes.token;
}

/** go-tfe's LogReader: `limit` bytes at a growing offset; an empty read polls again; ETX ends. */
async function readLog(url: string, limit: number): Promise<Buffer> {
  const out: Buffer[] = [];
  let offset = 0;
  for (let reads = 0; reads < 100; reads++) {
    const u = new URL(url);
    u.searchParams.set("limit", String(limit));
    u.searchParams.set("offset", String(offset));
    const res = await fetch(u);
    expect(res.status).toBe(200);
    const bytes = Buffer.from(await res.arrayBuffer());
    out.push(bytes);
    offset += bytes.length;
    if (bytes.length > 0 && bytes[bytes.length - 1] === 0x03) return Buffer.concat(out);
    if (bytes.length === 0) await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("the log never ended");
}

describe("an agent run's data through HCP Terraform's API, end to end (N20)", () => {
  it("outputs (sensitive null; the value for manage-workspaces only), the state's md5, the log, the JSON plan", async () => {
    const { org, owner } = await createOrg(api);
    const module = await noCodeModule(api, org, owner.token);
    const pool = await tfe(api, "POST", `organizations/${org}/agent-pools`, owner.token, {
      data: { type: "agent-pools", attributes: { name: unique("pool") } },
    });
    const poolId = pool.json.data.id as string;
    const poolToken = (
      await tfe(api, "POST", `agent-pools/${poolId}/authentication-tokens`, owner.token, {
        data: { type: "authentication-tokens", attributes: { description: "e2e" } },
      })
    ).json.data.attributes.token as string;
    const created = await tfe(api, "POST", `no-code-modules/${module.id}/workspaces`, owner.token, {
      data: {
        type: "workspaces",
        attributes: { name: unique("ws"), "execution-mode": "agent", "agent-pool-id": poolId, "auto-apply": true },
        relationships: {
          vars: {
            data: [
              { type: "vars", attributes: { key: "db_password", value: "pw", category: "engine", sensitive: true } },
            ],
          },
        },
      },
    });
    expect(created.status).toBe(200);
    const workspaceId = created.json.data.id as string;
    const runId = created.json.data.relationships["latest-run"].data.id as string;
    const engine = created.json.data.attributes["terraform-version"] as string;

    const registered = await agent("POST", "register", poolToken, {
      body: { name: "e2e-agent", version: "0.1.0", engine: { name: "terraform", version: engine } },
    });
    expect(registered.status).toBe(201);
    const session = { agentId: registered.json["agent-id"], secret: registered.json["session-secret"] };

    // Plan job: a log in two pieces, the JSON plan, finish.
    const polled = await agent("GET", "jobs/next?wait=5", poolToken, { session });
    expect(polled.status).toBe(200);
    const planJob = polled.json.job.id as string;
    const planToken = (await agent("POST", `jobs/${planJob}/start`, poolToken, { session })).json["job-token"];
    expect((await agent("PUT", `jobs/${planJob}/logs?offset=0`, planToken, { body: "Initializing\n" })).status).toBe(
      200,
    );
    expect((await agent("PUT", `jobs/${planJob}/logs?offset=13`, planToken, { body: "Plan: 1 to add\n" })).status).toBe(
      200,
    );
    const jsonPlan = {
      format_version: "1.2",
      terraform_version: engine,
      resource_changes: [
        {
          address: "terraform_data.a",
          mode: "managed",
          type: "terraform_data",
          name: "a",
          change: { actions: ["create"], before: null, after: {}, after_unknown: {} },
        },
      ],
      output_changes: {},
    };
    expect(
      (await agent("PUT", `jobs/${planJob}/json-plan`, planToken, { body: JSON.stringify(jsonPlan) })).status,
    ).toBe(204);
    expect((await agent("POST", `jobs/${planJob}/finish`, planToken, { body: { status: "finished" } })).status).toBe(
      200,
    );

    // Apply job: the state with a plain, a sensitive and a list output.
    const applyPoll = await agent("GET", "jobs/next?wait=5", poolToken, { session });
    expect(applyPoll.json.job.phase).toBe("apply");
    const applyJob = applyPoll.json.job.id as string;
    const applyToken = (await agent("POST", `jobs/${applyJob}/start`, poolToken, { session })).json["job-token"];
    const state = JSON.stringify({
      version: 4,
      terraform_version: engine,
      serial: 1,
      lineage: "e2e-lineage",
      outputs: {
        endpoint: { value: "db.example.test", type: "string" },
        password: { value: "s3cr3t", type: "string", sensitive: true },
      },
      resources: [
        {
          mode: "managed",
          type: "terraform_data",
          name: "a",
          provider: 'provider["terraform.io/builtin/terraform"]',
          instances: [{ schema_version: 0, attributes: { id: "x" } }],
        },
      ],
    });
    expect((await agent("PUT", `jobs/${applyJob}/state`, applyToken, { body: state })).status).toBe(200);
    expect((await agent("POST", `jobs/${applyJob}/finish`, applyToken, { body: { status: "finished" } })).status).toBe(
      200,
    );
    await vi.waitFor(
      async () => {
        const run = await tfe(api, "GET", `runs/${runId}`, owner.token);
        if (run.json.data.attributes.status !== "applied") throw new Error(run.json.data.attributes.status);
      },
      { timeout: 20_000, interval: 200 },
    );

    // Outputs: plain values for readers, null for the sensitive one.
    const readTeam = await teamToken(org, { "read-workspaces": true });
    const manageTeam = await teamToken(org, { "manage-workspaces": true });
    const outputs = await tfe(api, "GET", `workspaces/${workspaceId}/current-state-version-outputs`, readTeam);
    expect(outputs.status).toBe(200);
    const byName = Object.fromEntries(
      outputs.json.data.map((o: { id: string; attributes: { name: string } }) => [o.attributes.name, o]),
    );
    expect(byName.endpoint.attributes).toMatchObject({ sensitive: false, value: "db.example.test", type: "string" });
    expect(byName.password.attributes).toMatchObject({ sensitive: true, value: null });
    const secret = await tfe(api, "GET", `state-version-outputs/${byName.password.id}`, manageTeam);
    expect(secret.status).toBe(200);
    expect(secret.json.data.attributes.value).toBe("s3cr3t");
    expect((await tfe(api, "GET", `state-version-outputs/${byName.password.id}`, readTeam)).status).toBe(404);

    // The state download: its MD5 is the version's; readers get no link.
    const sv = await tfe(api, "GET", `workspaces/${workspaceId}/current-state-version`, manageTeam);
    const download = await fetch(sv.json.data.attributes["hosted-state-download-url"]);
    expect(download.status).toBe(200);
    expect(download.headers.get("cache-control")).toBe("no-store");
    expect(download.headers.get("referrer-policy")).toBe("no-referrer");
    const bytes = Buffer.from(await download.arrayBuffer());
    expect(createHash("md5").update(bytes).digest("hex")).toBe(sv.json.data.attributes.md5);
    expect(bytes.toString("utf8")).toBe(state);
    const asReader = await tfe(api, "GET", `workspaces/${workspaceId}/current-state-version`, readTeam);
    expect(asReader.json.data.attributes["hosted-state-download-url"]).toBeNull();

    // The plan's log as go-tfe reads it, and the JSON plan behind json-output.
    const plan = await tfe(api, "GET", `runs/${runId}/plan`, readTeam);
    const log = await readLog(plan.json.data.attributes["log-read-url"], 5);
    expect(log.toString("utf8")).toBe("\u0002Initializing\nPlan: 1 to add\n\u0003");
    const redirect = await fetch(`${api.url}/api/v2/plans/${plan.json.data.id}/json-output`, {
      headers: { Authorization: `Bearer ${manageTeam}` },
      redirect: "manual",
    });
    expect(redirect.status).toBe(307);
    const followed = await fetch(redirect.headers.get("location")!);
    expect(await followed.json()).toEqual(jsonPlan);
    const user = await createUser(api);
    expect((await tfe(api, "GET", `plans/${plan.json.data.id}/json-output`, user.token)).status).toBe(404);
  }, 120_000);
});
