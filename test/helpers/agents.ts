/**
 * Protocol-level agents for the worker tests of the execution plane (decisions N17–N19):
 * calls of /api/agent/v1 through the Worker's own fetch handler (./worker-request.ts), and
 * the set-up of an agent pool, its token and an agent workspace through /api/v2.
 */
import { type TfeAnswer, tfe, uniqueName } from "./nocode";
import { createNoCodeWorkspace, type NoCodeOrg, noCodeOrg, varEntry } from "./nocode-modules";
import { workerRequest } from "./worker-request";

export interface AgentCall {
  /** Bearer credential (pool token or job token); null sends none. */
  token?: string | null;
  /** A session: sends Keyway-Agent-Id and Keyway-Agent-Session. */
  session?: AgentSession;
  body?: unknown;
  rawBody?: BodyInit;
  headers?: Record<string, string>;
}

/** Call /api/agent/v1/<path>. */
export function agentCall(method: string, path: string, call: AgentCall = {}): Promise<TfeAnswer> {
  const headers: Record<string, string> = { ...call.headers };
  if (call.token) headers.Authorization = `Bearer ${call.token}`;
  if (call.session) {
    headers.Authorization = `Bearer ${call.session.poolToken}`;
    headers["Keyway-Agent-Id"] = call.session.agentId;
    headers["Keyway-Agent-Session"] = call.session.sessionSecret;
  }
  let body: BodyInit | undefined = call.rawBody;
  if (call.body !== undefined) {
    body = JSON.stringify(call.body);
    headers["Content-Type"] = "application/json";
  }
  return workerRequest(`http://keyway.test/api/agent/v1/${path.replace(/^\//, "")}`, { method, headers, body });
}

/** A registered agent's session. */
export interface AgentSession {
  poolToken: string;
  agentId: string;
  sessionSecret: string;
}

/** Register an agent (201 expected). */
export async function registerAgent(
  poolToken: string,
  engineVersion: string,
  name = uniqueName("agent"),
  version = "0.1.0",
): Promise<AgentSession> {
  const res = await agentCall("POST", "register", {
    token: poolToken,
    body: { name, version, engine: { name: "terraform", version: engineVersion } },
  });
  if (res.status !== 201) throw new Error(`register: ${res.status} ${res.text}`);
  return { poolToken, agentId: res.json["agent-id"], sessionSecret: res.json["session-secret"] };
}

/** Create an agent pool in `ctx`'s organization; returns its id. */
export async function createPool(ctx: Pick<NoCodeOrg, "org" | "ownerToken">, name = uniqueName("pool")) {
  const res = await tfe("POST", `organizations/${ctx.org}/agent-pools`, {
    token: ctx.ownerToken,
    body: { data: { type: "agent-pools", attributes: { name } } },
  });
  if (res.status !== 201) throw new Error(`create pool: ${res.status} ${res.text}`);
  return res.json.data.id as string;
}

/** Create an agent token of a pool; returns the token and its id. */
export async function createAgentToken(poolId: string, token: string, description = "test agent") {
  const res = await tfe("POST", `agent-pools/${poolId}/authentication-tokens`, {
    token,
    body: { data: { type: "authentication-tokens", attributes: { description } } },
  });
  if (res.status !== 201) throw new Error(`create agent token: ${res.status} ${res.text}`);
  return { token: res.json.data.attributes.token as string, id: res.json.data.id as string };
}

/** An organization with a no-code module ({@link noCodeOrg}), an agent pool and an agent token of it. */
export async function agentPoolOrg(): Promise<{ ctx: NoCodeOrg; poolId: string; poolToken: string }> {
  const ctx = await noCodeOrg();
  const poolId = await createPool(ctx);
  const poolToken = (await createAgentToken(poolId, ctx.ownerToken)).token;
  return { ctx, poolId, poolToken };
}

/** An agent workspace (E4 with `execution-mode: agent`) and its first run. */
export async function createAgentWorkspace(
  ctx: NoCodeOrg,
  poolId: string,
  attributes: Record<string, unknown> = {},
  vars = [varEntry("prefix", "pet")],
) {
  return createNoCodeWorkspace(
    ctx.noCodeModuleId,
    ctx.ownerToken,
    { "execution-mode": "agent", "agent-pool-id": poolId, ...attributes },
    vars,
  );
}

/** A JSON plan (format 1.2) creating `addresses` as `terraform_data` resources. */
export function jsonPlanCreating(addresses: string[]) {
  return {
    format_version: "1.2",
    terraform_version: "1.11.4",
    resource_changes: addresses.map((address) => ({
      address,
      mode: "managed",
      type: address.split(".")[0],
      name: address.split(".")[1],
      change: { actions: ["create"], before: null, after: {}, after_unknown: {} },
    })),
    output_changes: {},
  };
}

/** A state (version 4) with `addresses` as `terraform_data` resources. */
export function stateWith(serial: number, lineage: string, addresses: string[], outputs: Record<string, unknown> = {}) {
  return {
    version: 4,
    terraform_version: "1.11.4",
    serial,
    lineage,
    outputs,
    resources: addresses.map((address) => ({
      mode: "managed",
      type: address.split(".")[0],
      name: address.split(".")[1],
      provider: 'provider["terraform.io/builtin/terraform"]',
      instances: [{ schema_version: 0, attributes: { id: crypto.randomUUID() } }],
    })),
  };
}

/**
 * The plan job of the next queued run, done by `session`: poll, start, upload `jsonPlan`,
 * finish. Returns the job's id.
 */
export async function planNextJob(session: AgentSession, jsonPlan: unknown): Promise<string> {
  const polled = await agentCall("GET", "jobs/next?wait=2", { session });
  if (polled.status !== 200) throw new Error(`poll: ${polled.status} ${polled.text}`);
  const jobId = polled.json.job.id as string;
  const started = await agentCall("POST", `jobs/${jobId}/start`, { session });
  if (started.status !== 200) throw new Error(`start: ${started.status} ${started.text}`);
  const jobToken = started.json["job-token"] as string;
  const uploaded = await agentCall("PUT", `jobs/${jobId}/json-plan`, {
    token: jobToken,
    rawBody: JSON.stringify(jsonPlan),
  });
  if (uploaded.status !== 204) throw new Error(`json-plan: ${uploaded.status} ${uploaded.text}`);
  const finished = await agentCall("POST", `jobs/${jobId}/finish`, { token: jobToken, body: { status: "finished" } });
  if (finished.status !== 200) throw new Error(`finish: ${finished.status} ${finished.text}`);
  return jobId;
}
