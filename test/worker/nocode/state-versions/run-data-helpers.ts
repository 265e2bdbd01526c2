/**
 * An agent run driven through the agent protocol for the run-data tests (decisions N18,
 * N20): register → poll → start → log → JSON plan → finish, then (auto-apply) the apply job
 * uploads a state with outputs and finishes.
 */
import { agentCall, createAgentWorkspace, jsonPlanCreating, registerAgent, stateWith } from "../../../helpers/agents";
import { type TfeAnswer, tfe } from "../../../helpers/nocode";
import { type NoCodeOrg, waitForRun } from "../../../helpers/nocode-modules";
import { workerRequest } from "../../../helpers/worker-request";

/** The state an applied run uploads: one plain output, one sensitive, one list. */
export function stateWithOutputs(serial = 1, lineage = "lineage-run-data") {
  return stateWith(serial, lineage, ["terraform_data.a"], {
    name: { value: "pet-fluffy", type: "string" },
    secret: { value: "hunter2", type: "string", sensitive: true },
    zones: { value: ["a", "b"], type: ["list", "string"] },
  });
}

/** MD5 (hex) of bytes, as the state version's `md5`. */
export async function md5Hex(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("MD5", bytes as Uint8Array<ArrayBuffer>);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

export interface AppliedAgentRun {
  workspaceId: string;
  runId: string;
  planId: string;
  /** The JSON plan the agent uploaded. */
  jsonPlan: unknown;
  /** The state's bytes as uploaded. */
  stateBytes: Uint8Array;
}

/** An agent workspace's first run, planned and applied by a protocol-level agent. */
export async function appliedAgentRun(
  ctx: NoCodeOrg,
  poolId: string,
  poolToken: string,
  state: unknown = stateWithOutputs(),
): Promise<AppliedAgentRun> {
  const { workspace, runId } = await createAgentWorkspace(ctx, poolId, { "auto-apply": true });
  const ws = await tfe("GET", `workspaces/${workspace.id}`, { token: ctx.ownerToken });
  const session = await registerAgent(poolToken, ws.json.data.attributes["terraform-version"]);
  const polled = await agentCall("GET", "jobs/next?wait=2", { session });
  if (polled.status !== 200) throw new Error(`poll: ${polled.status} ${polled.text}`);
  const jobId = polled.json.job.id;
  const jobToken = (await agentCall("POST", `jobs/${jobId}/start`, { session })).json["job-token"];
  await agentCall("PUT", `jobs/${jobId}/logs?offset=0`, { token: jobToken, rawBody: "planning\n" });
  const jsonPlan = jsonPlanCreating(["terraform_data.a"]);
  await agentCall("PUT", `jobs/${jobId}/json-plan`, { token: jobToken, rawBody: JSON.stringify(jsonPlan) });
  await agentCall("POST", `jobs/${jobId}/finish`, { token: jobToken, body: { status: "finished" } });
  await waitForRun(runId, ctx.ownerToken, ["apply_queued"]);
  const applyPoll = await agentCall("GET", "jobs/next?wait=2", { session });
  const applyId = applyPoll.json.job.id;
  const applyToken = (await agentCall("POST", `jobs/${applyId}/start`, { session })).json["job-token"];
  const stateBytes = new TextEncoder().encode(JSON.stringify(state));
  const up = await agentCall("PUT", `jobs/${applyId}/state`, { token: applyToken, rawBody: stateBytes });
  if (up.status !== 200) throw new Error(`state: ${up.status} ${up.text}`);
  await agentCall("POST", `jobs/${applyId}/finish`, { token: applyToken, body: { status: "finished" } });
  const run = await waitForRun(runId, ctx.ownerToken, ["applied"]);
  return { workspaceId: workspace.id, runId, planId: run.relationships.plan.data.id, jsonPlan, stateBytes };
}

/** Follow a signed link without a token. */
export function followLink(url: string): Promise<TfeAnswer> {
  return workerRequest(url, { method: "GET" });
}
