/**
 * A protocol-level agent for node-side tests (decision N18): calls of /api/agent/v1 over HTTP
 * against the real Worker, for tests that need an agent run with a given JSON plan without
 * running an engine (the agent program's own tests run `agent/keyway-agent` with one).
 */
import { type Api, agentCall } from "../../support/client";

/** A registered agent's session. */
export interface ProtocolSession {
  poolToken: string;
  agentId: string;
  secret: string;
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
