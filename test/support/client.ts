/**
 * The one HTTP client of the node-side tests for a Worker started with `startKeyway`
 * (./worker.ts): a call answers its status, text, headers and the text parsed as JSON (null
 * when it is empty or not JSON: text/plain keys, HTML pages). Each API has its flavour:
 * {@link vault} for /v1 (the Vault HTTP API, `X-Vault-Token`), {@link tfe} for /api/v2
 * (JSON:API, a bearer token) and {@link agentCall} for the agent protocol (/api/agent/v1).
 */

// biome-ignore lint/suspicious/noExplicitAny: test assertions walk arbitrary JSON
export type Json = any;

/** What a call answered. */
export interface Answer {
  status: number;
  json: Json;
  text: string;
  headers: Headers;
}

/** Where /api/v2 calls go, with the site-admin token of the bootstrap endpoints. */
export interface Api {
  url: string;
  adminToken: string;
}

/** `fetch` the whole answer. */
async function call(url: string, init: RequestInit): Promise<Answer> {
  const res = await fetch(url, init);
  const text = await res.text();
  let json: Json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    // not JSON
  }
  return { status: res.status, json, text, headers: res.headers };
}

/** `body` as JSON with its content type, or nothing. */
function jsonBody(body: unknown, contentType: string): { headers: Record<string, string>; body?: string } {
  return body === undefined
    ? { headers: {} }
    : { headers: { "Content-Type": contentType }, body: JSON.stringify(body) };
}

/** Call /v1/<path> (the Vault flavour) with the root token unless another (or null: none) is given. */
export function vault(
  keyway: { url: string; rootToken: string },
  method: string,
  path: string,
  body?: unknown,
  token: string | null = keyway.rootToken,
): Promise<Answer> {
  const sent = jsonBody(body, "application/json");
  return call(`${keyway.url}/v1/${path}`, {
    method,
    headers: { ...(token === null ? {} : { "X-Vault-Token": token }), ...sent.headers },
    body: sent.body,
  });
}

/** {@link vault}, failing unless the answer is 2xx. */
export async function vaultOk(
  keyway: { url: string; rootToken: string },
  method: string,
  path: string,
  body?: unknown,
  token?: string | null,
): Promise<Answer> {
  const res = await vault(keyway, method, path, body, token);
  if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status} ${res.text}`);
  return res;
}

/** Call /api/v2/<path> (the JSON:API flavour) with a bearer token (or null: none). */
export function tfe(
  api: { url: string },
  method: string,
  path: string,
  token: string | null,
  body?: unknown,
): Promise<Answer> {
  const sent = jsonBody(body, "application/vnd.api+json");
  return call(`${api.url}/api/v2/${path}`, {
    method,
    headers: { ...(token === null ? {} : { Authorization: `Bearer ${token}` }), ...sent.headers },
    body: sent.body,
  });
}

/** {@link tfe}, failing unless the answer is 2xx. */
export async function tfeOk(
  api: { url: string },
  method: string,
  path: string,
  token: string | null,
  body?: unknown,
): Promise<Answer> {
  const res = await tfe(api, method, path, token, body);
  if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status} ${res.text}`);
  return res;
}

/** The answer of `call`, failing with `what` unless its status is `status`. */
export async function expectStatus(call: Promise<Answer>, status: number, what: string): Promise<Answer> {
  const answer = await call;
  if (answer.status !== status) {
    throw new Error(`${what}: expected ${status}, got ${answer.status} ${answer.text}`);
  }
  return answer;
}

/** A registered agent's session (the agent protocol's headers). */
export interface AgentSession {
  agentId: string;
  secret: string;
}

/**
 * Call /api/agent/v1/<path> (the agent protocol flavour) with a bearer token and, for session
 * calls, the agent's headers; a string body is sent as is, another as JSON.
 */
export function agentCall(
  api: { url: string },
  method: string,
  path: string,
  token: string,
  options: { session?: AgentSession; body?: string | object } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { Authorization: `Bearer ${token}` };
  if (options.session) {
    headers["Keyway-Agent-Id"] = options.session.agentId;
    headers["Keyway-Agent-Session"] = options.session.secret;
  }
  const sent =
    typeof options.body === "string" ? { headers: {}, body: options.body } : jsonBody(options.body, "application/json");
  return call(`${api.url}/api/agent/v1/${path}`, { method, headers: { ...headers, ...sent.headers }, body: sent.body });
}
