/**
 * A protocol-level agent for node-side tests (decision N18): calls of /api/agent/v1 over HTTP
 * against the real Worker, for tests that need an agent run with a given JSON plan without
 * running an engine (the agent program's own tests run `agent/keyway-agent` with one).
 */
import type { Api } from "../console/seed";

// biome-ignore lint/suspicious/noExplicitAny: test helpers walk arbitrary JSON
type Json = any;

/** A registered agent's session. */
export interface ProtocolSession {
  poolToken: string;
  agentId: string;
  secret: string;
}

/** A call of /api/agent/v1 with a bearer credential and, for session calls, the agent's headers. */
export async function agentCall(
  api: Pick<Api, "url">,
  method: string,
  path: string,
  token: string,
  options: { session?: ProtocolSession; body?: string | object } = {},
): Promise<{ status: number; json: Json; text: string }> {
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
  let json: Json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {}
  return { status: res.status, json, text };
}

/** Register an agent of the pool whose token is `poolToken`. */
export async function registerProtocolAgent(
  api: Pick<Api, "url">,
  poolToken: string,
  name: string,
  engineVersion = "1.11.4",
): Promise<ProtocolSession> {
  const registered = await agentCall(api, "POST", "register", poolToken, {
    body: { name, version: "0.1.0", engine: { name: "terraform", version: engineVersion } },
  });
  if (registered.status !== 201) throw new Error(`register: ${registered.status} ${registered.text}`);
  return { poolToken, agentId: registered.json["agent-id"], secret: registered.json["session-secret"] };
}

/** The plan job of the next queued run, done by `session`: poll, start, upload `jsonPlan`, finish. */
export async function planNextJob(api: Pick<Api, "url">, session: ProtocolSession, jsonPlan: string): Promise<void> {
  const polled = await agentCall(api, "GET", "jobs/next?wait=5", session.poolToken, { session });
  if (polled.status !== 200) throw new Error(`poll: ${polled.status} ${polled.text}`);
  const jobId = polled.json.job.id as string;
  const started = await agentCall(api, "POST", `jobs/${jobId}/start`, session.poolToken, { session });
  if (started.status !== 200) throw new Error(`start: ${started.status} ${started.text}`);
  const jobToken = started.json["job-token"] as string;
  const uploaded = await agentCall(api, "PUT", `jobs/${jobId}/json-plan`, jobToken, { body: jsonPlan });
  if (uploaded.status !== 204) throw new Error(`json-plan: ${uploaded.status} ${uploaded.text}`);
  const finished = await agentCall(api, "POST", `jobs/${jobId}/finish`, jobToken, { body: { status: "finished" } });
  if (finished.status !== 200) throw new Error(`finish: ${finished.status} ${finished.text}`);
}
