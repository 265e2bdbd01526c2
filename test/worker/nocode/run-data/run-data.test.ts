/**
 * A run's data through HCP Terraform's API (decision N20): `json-output` (204 until the plan
 * finishes, then 307 to a B23 link of 60 s; the engine's JSON plan for an agent run;
 * manage-workspaces users and teams only) and `log-read-url` read the way go-tfe's log
 * reader reads it (https://github.com/hashicorp/go-tfe/blob/main/logreader.go): `?limit&offset`
 * with a growing offset until the ETX byte, STX first.
 */
import { beforeAll, describe, expect, it } from "vitest";
import {
  type AgentSession,
  agentCall,
  agentPoolOrg,
  createAgentWorkspace,
  jsonPlanCreating,
  registerAgent,
} from "../../../helpers/agents";
import { createOrgToken, createTeam, createTeamToken, tfe } from "../../../helpers/nocode";
import { createNoCodeWorkspace, type NoCodeOrg, varEntry, waitForRun } from "../../../helpers/nocode-modules";
import { followLink } from "../state-versions/run-data-helpers";

let ctx: NoCodeOrg;
let poolId: string;
let poolToken: string;
let manageTeam: string;
let readTeam: string;
let orgToken: string;

beforeAll(async () => {
  ({ ctx, poolId, poolToken } = await agentPoolOrg());
  manageTeam = await createTeamToken(await createTeam(ctx.org, { "manage-workspaces": true }));
  readTeam = await createTeamToken(await createTeam(ctx.org, { "read-workspaces": true }));
  orgToken = await createOrgToken(ctx.org);
}, 60_000);

/** An agent workspace's first run with its plan job started. */
async function startedPlan(): Promise<{
  runId: string;
  planId: string;
  jobId: string;
  jobToken: string;
  session: AgentSession;
}> {
  const { workspace, runId } = await createAgentWorkspace(ctx, poolId);
  const ws = await tfe("GET", `workspaces/${workspace.id}`, { token: ctx.ownerToken });
  const session = await registerAgent(poolToken, ws.json.data.attributes["terraform-version"]);
  const polled = await agentCall("GET", "jobs/next?wait=2", { session });
  const jobId = polled.json.job.id;
  const jobToken = (await agentCall("POST", `jobs/${jobId}/start`, { session })).json["job-token"];
  const run = await tfe("GET", `runs/${runId}`, { token: ctx.ownerToken });
  return { runId, planId: run.json.data.relationships.plan.data.id, jobId, jobToken, session };
}

describe("json-output (N20)", () => {
  it("is 204 until the plan finishes, then 307 to a signed link serving the engine's JSON plan", async () => {
    const { runId, planId, jobId, jobToken } = await startedPlan();
    for (const path of [`plans/${planId}/json-output`, `runs/${runId}/plan/json-output`]) {
      const res = await tfe("GET", path, { token: ctx.ownerToken });
      expect(res.status, path).toBe(204);
    }
    const plan = jsonPlanCreating(["terraform_data.x", "terraform_data.y"]);
    await agentCall("PUT", `jobs/${jobId}/json-plan`, { token: jobToken, rawBody: JSON.stringify(plan) });
    // Uploaded but the plan job has not finished: still 204.
    expect((await tfe("GET", `plans/${planId}/json-output`, { token: ctx.ownerToken })).status).toBe(204);
    await agentCall("POST", `jobs/${jobId}/finish`, { token: jobToken, body: { status: "finished" } });
    await waitForRun(runId, ctx.ownerToken, ["planned"]);

    for (const [path, token] of [
      [`plans/${planId}/json-output`, ctx.ownerToken],
      [`runs/${runId}/plan/json-output`, manageTeam],
    ] as const) {
      const res = await tfe("GET", path, { token });
      expect(res.status, path).toBe(307);
      const location = res.headers.get("location")!;
      expect(location).toMatch(
        /^http:\/\/keyway\.test\/api\/v2\/signed\/plans\/plan-[A-Za-z0-9]{16}\/json-output\?expires=/,
      );
      const expiry = Number(new URL(location).searchParams.get("expires"));
      expect(expiry - Date.now() / 1000).toBeLessThanOrEqual(61);
      const got = await followLink(location);
      expect(got.status).toBe(200);
      expect(got.headers.get("cache-control")).toBe("no-store");
      expect(got.headers.get("referrer-policy")).toBe("no-referrer");
      expect(got.json).toEqual(plan);
    }
    // N20: manage-workspaces users and teams only; the organization token and readers get 404.
    for (const token of [readTeam, orgToken]) {
      expect((await tfe("GET", `plans/${planId}/json-output`, { token })).status).toBe(404);
      expect((await tfe("GET", `runs/${runId}/plan/json-output`, { token })).status).toBe(404);
    }
  });

  it("a plan that errored has no JSON output: 404", async () => {
    const { runId, planId, jobId, jobToken } = await startedPlan();
    await agentCall("POST", `jobs/${jobId}/finish`, { token: jobToken, body: { status: "errored", message: "boom" } });
    await waitForRun(runId, ctx.ownerToken, ["errored"]);
    expect((await tfe("GET", `plans/${planId}/json-output`, { token: ctx.ownerToken })).status).toBe(404);
  });

  it("a JSON plan link of another plan, another purpose or tampered is 404", async () => {
    const { runId, planId, jobId, jobToken } = await startedPlan();
    await agentCall("PUT", `jobs/${jobId}/json-plan`, {
      token: jobToken,
      rawBody: JSON.stringify(jsonPlanCreating(["terraform_data.z"])),
    });
    await agentCall("POST", `jobs/${jobId}/finish`, { token: jobToken, body: { status: "finished" } });
    await waitForRun(runId, ctx.ownerToken, ["planned"]);
    const location = new URL(
      (await tfe("GET", `plans/${planId}/json-output`, { token: ctx.ownerToken })).headers.get("location")!,
    );
    const query = location.search;
    for (const link of [
      `${location.origin}/api/v2/signed/plans/plan-AAAAAAAAAAAAAAAA/json-output${query}`,
      `${location.origin}/api/v2/signed/state-versions/${planId}${query}`,
      `${location.origin}/api/v2/signed/logs/${planId}${query}`,
      `${location.origin}${location.pathname}?expires=${location.searchParams.get("expires")}&signature=${"A".repeat(43)}`,
    ]) {
      const res = await followLink(link);
      expect(res.status, link).toBe(404);
      expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    }
  });
});

/** go-tfe's LogReader: read `limit` bytes at a growing offset; an empty read polls again. */
async function readLikeGoTfe(url: string, limit: number, between: () => Promise<void>): Promise<Uint8Array> {
  const out: number[] = [];
  for (let reads = 0; reads < 200; reads++) {
    const u = new URL(url);
    u.searchParams.set("limit", String(limit));
    u.searchParams.set("offset", String(out.length));
    const res = await followLink(u.toString());
    expect(res.status).toBe(200);
    const bytes = new TextEncoder().encode(res.text);
    expect(bytes.length).toBeLessThanOrEqual(limit);
    out.push(...bytes);
    if (out.length > 0 && out[out.length - 1] === 0x03) return new Uint8Array(out);
    if (bytes.length === 0) await between();
  }
  throw new Error("the log never ended (no ETX)");
}

describe("log-read-url (N20)", () => {
  it("reads a growing plan log with limit and offset: STX first, ETX once the plan job ended", async () => {
    const { runId, planId, jobId, jobToken } = await startedPlan();
    const planDoc = await tfe("GET", `plans/${planId}`, { token: readTeam });
    const url = planDoc.json.data.attributes["log-read-url"] as string;
    expect(url).toMatch(/^http:\/\/keyway\.test\/api\/v2\/signed\/logs\/plan-/);

    const pieces = ["Initializing...\n", "Planning: 2 to add\n", "Plan: 2 to add, 0 to change, 0 to destroy.\n"];
    let sent = 0;
    let offset = 0;
    const between = async () => {
      if (sent < pieces.length) {
        const body = new TextEncoder().encode(pieces[sent]!);
        const res = await agentCall("PUT", `jobs/${jobId}/logs?offset=${offset}`, { token: jobToken, rawBody: body });
        expect(res.status).toBe(200);
        offset += body.length;
        sent++;
      } else if (sent === pieces.length) {
        await agentCall("PUT", `jobs/${jobId}/json-plan`, {
          token: jobToken,
          rawBody: JSON.stringify(jsonPlanCreating(["terraform_data.a", "terraform_data.b"])),
        });
        await agentCall("POST", `jobs/${jobId}/finish`, { token: jobToken, body: { status: "finished" } });
        sent++;
      }
    };
    // Before anything was written: STX only, no ETX.
    const first = await followLink(`${url}&limit=10&offset=0`);
    expect([...new TextEncoder().encode(first.text)]).toEqual([0x02]);
    const framed = await readLikeGoTfe(url, 7, between);
    expect(framed[0]).toBe(0x02);
    expect(framed[framed.length - 1]).toBe(0x03);
    expect(new TextDecoder().decode(framed.subarray(1, -1))).toBe(pieces.join(""));
    await waitForRun(runId, ctx.ownerToken, ["planned"]);
    // Reading past the end answers nothing more.
    const after = await followLink(`${url}&limit=10&offset=${framed.length}`);
    expect(after.status).toBe(200);
    expect(after.text).toBe("");
    expect(after.headers.get("cache-control")).toBe("no-store");
  });

  it("an apply's log-read-url (GET /runs/:id/apply, /applies/:id): the apply job's log, ETX once it ended", async () => {
    const { runId, jobId, jobToken, session } = await startedPlan();
    await agentCall("PUT", `jobs/${jobId}/json-plan`, {
      token: jobToken,
      rawBody: JSON.stringify(jsonPlanCreating(["terraform_data.a"])),
    });
    await agentCall("POST", `jobs/${jobId}/finish`, { token: jobToken, body: { status: "finished" } });
    await waitForRun(runId, ctx.ownerToken, ["planned"]);
    const pending = await tfe("GET", `runs/${runId}/apply`, { token: readTeam });
    expect(pending.status).toBe(200);
    expect(pending.json.data.attributes.status).toBe("pending");
    const applyId = pending.json.data.id as string;
    expect(applyId).toMatch(/^apply-[A-Za-z0-9]{16}$/);
    const run = await tfe("GET", `runs/${runId}`, { token: ctx.ownerToken });
    expect(run.json.data.relationships.apply.data).toEqual({ id: applyId, type: "applies" });

    expect((await tfe("POST", `runs/${runId}/actions/apply`, { token: ctx.ownerToken })).status).toBe(202);
    const poll = await agentCall("GET", "jobs/next?wait=2", { session });
    const applyJob = poll.json.job.id;
    const applyToken = (await agentCall("POST", `jobs/${applyJob}/start`, { session })).json["job-token"];
    await agentCall("PUT", `jobs/${applyJob}/logs?offset=0`, { token: applyToken, rawBody: "Applying...\n" });
    const running = await tfe("GET", `applies/${applyId}`, { token: ctx.ownerToken });
    expect(running.json.data.attributes.status).toBe("running");
    const url = running.json.data.attributes["log-read-url"] as string;
    expect(url).toContain(`/api/v2/signed/logs/${applyId}?`);
    expect((await followLink(url)).text).toBe("\u0002Applying...\n");
    await agentCall("POST", `jobs/${applyJob}/finish`, { token: applyToken, body: { status: "finished" } });
    await waitForRun(runId, ctx.ownerToken, ["applied"]);
    expect((await followLink(url)).text).toBe("\u0002Applying...\n\u0003");
    const done = await tfe("GET", `applies/${applyId}`, { token: ctx.ownerToken });
    expect(done.json.data.attributes).toMatchObject({ status: "finished", "resource-additions": 1 });
    expect((await tfe("GET", `applies/apply-AAAAAAAAAAAAAAAA`, { token: ctx.ownerToken })).status).toBe(404);
  });

  it("a log of many small chunks is read in bounded steps (at most 64 chunks a read)", async () => {
    const { planId, jobId, jobToken } = await startedPlan();
    for (let i = 0; i < 70; i++) {
      const res = await agentCall("PUT", `jobs/${jobId}/logs?offset=${i}`, { token: jobToken, rawBody: "x" });
      expect(res.status).toBe(200);
    }
    const url = (await tfe("GET", `plans/${planId}`, { token: ctx.ownerToken })).json.data.attributes["log-read-url"];
    const first = await followLink(`${url}&limit=1000&offset=0`);
    expect(first.text).toBe(`\u0002${"x".repeat(64)}`);
    const rest = await followLink(`${url}&limit=1000&offset=65`);
    expect(rest.text).toBe("x".repeat(6));
  });

  it("a bad limit or offset is 400; a tampered log link is 404", async () => {
    const { planId } = await startedPlan();
    const url = (await tfe("GET", `plans/${planId}`, { token: ctx.ownerToken })).json.data.attributes["log-read-url"];
    expect((await followLink(`${url}&offset=-1`)).status).toBe(400);
    expect((await followLink(`${url}&limit=abc`)).status).toBe(400);
    const u = new URL(url);
    u.searchParams.set("expires", String(Number(u.searchParams.get("expires")) - 1));
    expect((await followLink(u.toString())).status).toBe(404);
  });

  it("a remote run's plan log is empty and complete (STX, ETX) once planned", async () => {
    const { runId } = await createNoCodeWorkspace(ctx.noCodeModuleId, ctx.ownerToken, {}, [varEntry("prefix", "pet")]);
    const run = await waitForRun(runId, ctx.ownerToken, ["planned", "applied", "planned_and_finished", "errored"]);
    const plan = await tfe("GET", `runs/${runId}/plan`, { token: ctx.ownerToken });
    expect(run.relationships.plan.data.id).toBe(plan.json.data.id);
    const res = await followLink(plan.json.data.attributes["log-read-url"]);
    expect([...new TextEncoder().encode(res.text)]).toEqual([0x02, 0x03]);
  });
});
