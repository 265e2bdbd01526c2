/**
 * The first run of an agent workspace through the agent protocol (decisions N18, N19), with
 * a protocol-level agent: register → poll → start → configuration and inputs → log, plan
 * file, JSON plan → finish (planned, or with auto-apply on to the apply job) → apply job →
 * state → finish → applied, with HCP's statuses, the real counts and execution-details.
 */
import { beforeAll, describe, expect, it } from "vitest";
import {
  agentCall,
  agentPoolOrg,
  createAgentWorkspace,
  jsonPlanCreating,
  registerAgent,
  stateWith,
} from "../../../helpers/agents";
import { tfe } from "../../../helpers/nocode";
import { type NoCodeOrg, varEntry, waitForRun } from "../../../helpers/nocode-modules";
import { workerRequest } from "../../../helpers/worker-request";

let ctx: NoCodeOrg;
let poolId: string;
let poolToken: string;

beforeAll(async () => {
  ({ ctx, poolId, poolToken } = await agentPoolOrg());
});

/** The workspace's engine version (E4 resolved the default). */
async function engineOf(workspaceId: string): Promise<string> {
  const ws = await tfe("GET", `workspaces/${workspaceId}`, { token: ctx.ownerToken });
  return ws.json.data.attributes["terraform-version"];
}

describe("an agent workspace's first run, through the protocol", () => {
  it("plans and applies with auto-apply: statuses, counts, execution-details, state", async () => {
    const { workspace, runId } = await createAgentWorkspace(ctx, poolId, { "auto-apply": true }, [
      varEntry("prefix", "pet"),
      varEntry("greeting", "s3cret", { sensitive: true }),
    ]);
    const engine = await engineOf(workspace.id);
    const queued = await tfe("GET", `runs/${runId}`, { token: ctx.ownerToken });
    expect(queued.json.data.attributes.status).toBe("plan_queued");

    const session = await registerAgent(poolToken, engine, "agent-one");
    const polled = await agentCall("GET", "jobs/next?wait=2", { session });
    expect(polled.status).toBe(200);
    expect(polled.json.job).toMatchObject({ "run-id": runId, phase: "plan", "workspace-id": workspace.id });
    const jobId = polled.json.job.id;

    const started = await agentCall("POST", `jobs/${jobId}/start`, { session });
    expect(started.status).toBe(200);
    const jobToken = started.json["job-token"];
    expect((await tfe("GET", `runs/${runId}`, { token: ctx.ownerToken })).json.data.attributes.status).toBe("planning");

    const config = await agentCall("GET", `jobs/${jobId}/configuration`, { token: jobToken });
    expect(config.status).toBe(200);
    expect(config.headers.get("content-type")).toBe("application/gzip");
    expect(config.headers.get("cache-control")).toBe("no-store");

    const inputs = await agentCall("GET", `jobs/${jobId}/inputs`, { token: jobToken });
    expect(inputs.status).toBe(200);
    expect(inputs.json["terraform-variables"]).toEqual(
      expect.arrayContaining([
        { key: "prefix", value: "pet", hcl: false, sensitive: false },
        { key: "greeting", value: "s3cret", hcl: false, sensitive: true },
      ]),
    );
    expect(inputs.json.registry.host).toBe("keyway.test");
    expect(inputs.json.registry.token).toContain(".atlasv1.");
    expect(inputs.headers.get("cache-control")).toBe("no-store");
    // The registry token reads the run's organization's modules while the job runs, and nothing else.
    const registryToken = inputs.json.registry.token;
    const versions = `http://keyway.test/api/registry/v1/modules/${ctx.org}/${ctx.registryModule.name}/${ctx.registryModule.provider}/versions`;
    const read = await workerRequest(versions, { headers: { Authorization: `Bearer ${registryToken}` } });
    expect(read.status).toBe(200);
    expect((await tfe("GET", `organizations/${ctx.org}`, { token: registryToken })).status).toBe(401);

    expect((await agentCall("GET", `jobs/${jobId}/state`, { token: jobToken })).status).toBe(204);
    const log = await agentCall("PUT", `jobs/${jobId}/logs?offset=0`, { token: jobToken, rawBody: "planning…\n" });
    expect(log.status).toBe(200);
    // With its length declared, the plan file is streamed into storage (encrypted on the way).
    const planFile = await agentCall("PUT", `jobs/${jobId}/plan-file`, {
      token: jobToken,
      rawBody: new Uint8Array([1, 2, 3, 4]),
      headers: { "Content-Length": "4" },
    });
    expect(planFile.status).toBe(204);
    const plan = jsonPlanCreating(["terraform_data.a", "terraform_data.b"]);
    const jp = await agentCall("PUT", `jobs/${jobId}/json-plan`, { token: jobToken, rawBody: JSON.stringify(plan) });
    expect(jp.status).toBe(204);
    const finished = await agentCall("POST", `jobs/${jobId}/finish`, { token: jobToken, body: { status: "finished" } });
    expect(finished.status).toBe(200);
    expect(finished.json.job.status).toBe("finished");
    // Idempotent; and the registry token stops with its job.
    const again = await agentCall("POST", `jobs/${jobId}/finish`, { token: jobToken, body: { status: "errored" } });
    expect(again.json.job.status).toBe("finished");
    expect((await workerRequest(versions, { headers: { Authorization: `Bearer ${registryToken}` } })).status).toBe(401);

    const applyQueued = await waitForRun(runId, ctx.ownerToken, ["apply_queued"]);
    expect(applyQueued.attributes["has-changes"]).toBe(true);
    const planDoc = await tfe("GET", `runs/${runId}/plan`, { token: ctx.ownerToken });
    expect(planDoc.json.data.attributes).toMatchObject({
      status: "finished",
      "resource-additions": 2,
      "resource-changes": 0,
      "resource-destructions": 0,
      "resource-imports": 0,
      "execution-details": {
        mode: "agent",
        "agent-id": session.agentId,
        "agent-name": "agent-one",
        "agent-pool-id": poolId,
        "engine-name": "terraform",
        "engine-version": engine,
      },
    });

    const applyPoll = await agentCall("GET", "jobs/next?wait=2", { session });
    expect(applyPoll.status).toBe(200);
    expect(applyPoll.json.job).toMatchObject({ "run-id": runId, phase: "apply" });
    const applyId = applyPoll.json.job.id;
    const applyStart = await agentCall("POST", `jobs/${applyId}/start`, { session });
    const applyToken = applyStart.json["job-token"];
    expect((await tfe("GET", `runs/${runId}`, { token: ctx.ownerToken })).json.data.attributes.status).toBe("applying");
    const planBack = await agentCall("GET", `jobs/${applyId}/plan-file`, { token: applyToken });
    expect(planBack.status).toBe(200);
    expect([...new Uint8Array(await new Blob([planBack.text]).arrayBuffer())]).toEqual([1, 2, 3, 4]);
    expect((await agentCall("GET", `jobs/${applyId}/lock-file`, { token: applyToken })).status).toBe(204);

    const state = stateWith(1, "lineage-1", ["terraform_data.a", "terraform_data.b"], {
      name: { value: "x", type: "string" },
    });
    const up = await agentCall("PUT", `jobs/${applyId}/state`, { token: applyToken, rawBody: JSON.stringify(state) });
    expect(up.status).toBe(200);
    expect(up.json).toMatchObject({ serial: 1, created: true });
    const done = await agentCall("POST", `jobs/${applyId}/finish`, { token: applyToken, body: { status: "finished" } });
    expect(done.status).toBe(200);
    await waitForRun(runId, ctx.ownerToken, ["applied"]);
    const ws = await tfe("GET", `workspaces/${workspace.id}`, { token: ctx.ownerToken });
    expect(ws.json.data.attributes["resource-count"]).toBe(2);

    // The apply job ended: its token no longer reads anything.
    const back = await agentCall("GET", `jobs/${applyId}/state`, { token: applyToken });
    expect(back.status).toBe(401);
  });

  it("serves the agent program with its SHA-256", async () => {
    const res = await agentCall("GET", "agent.mjs");
    expect(res.status).toBe(200);
    expect(res.text.startsWith("#!/usr/bin/env node")).toBe(true);
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(res.text)));
    expect(res.headers.get("keyway-agent-sha256")).toBe(
      [...digest].map((b) => b.toString(16).padStart(2, "0")).join(""),
    );
  });

  it("without auto-apply waits at planned; actions/apply sends the apply job", async () => {
    const { workspace, runId } = await createAgentWorkspace(ctx, poolId);
    const session = await registerAgent(poolToken, await engineOf(workspace.id));
    const polled = await agentCall("GET", "jobs/next?wait=2", { session });
    const jobId = polled.json.job.id;
    const jobToken = (await agentCall("POST", `jobs/${jobId}/start`, { session })).json["job-token"];
    await agentCall("PUT", `jobs/${jobId}/json-plan`, {
      token: jobToken,
      rawBody: JSON.stringify(jsonPlanCreating(["terraform_data.a"])),
    });
    // A plan file over several 64 KiB segments, streamed in and out.
    const bigPlan = "0123456789abcdef".repeat(13_000);
    const up = await agentCall("PUT", `jobs/${jobId}/plan-file`, {
      token: jobToken,
      rawBody: bigPlan,
      headers: { "Content-Length": String(bigPlan.length) },
    });
    expect(up.status).toBe(204);
    const lock = '# This file is maintained automatically by "terraform init".\n';
    expect((await agentCall("PUT", `jobs/${jobId}/lock-file`, { token: jobToken, rawBody: lock })).status).toBe(204);
    await agentCall("POST", `jobs/${jobId}/finish`, { token: jobToken, body: { status: "finished" } });
    const planned = await waitForRun(runId, ctx.ownerToken, ["planned", "errored"]);
    expect(planned.attributes["error-message"]).toBeNull();
    expect(planned.attributes.status).toBe("planned");
    const apply = await tfe("POST", `runs/${runId}/actions/apply`, { token: ctx.ownerToken });
    expect(apply.status).toBe(202);
    const next = await agentCall("GET", "jobs/next?wait=10", { session });
    expect(next.status).toBe(200);
    expect(next.json.job).toMatchObject({ "run-id": runId, phase: "apply" });
    const applyToken = (await agentCall("POST", `jobs/${next.json.job.id}/start`, { session })).json["job-token"];
    const planBack = await agentCall("GET", `jobs/${next.json.job.id}/plan-file`, { token: applyToken });
    expect(planBack.text).toBe(bigPlan);
    const lockBack = await agentCall("GET", `jobs/${next.json.job.id}/lock-file`, { token: applyToken });
    expect(lockBack.status).toBe(200);
    expect(lockBack.text).toBe(lock);
    // An apply job uploads no plan artifacts.
    expect(
      (await agentCall("PUT", `jobs/${next.json.job.id}/lock-file`, { token: applyToken, rawBody: lock })).status,
    ).toBe(409);
  });
});
