/**
 * Request builders for the secrets API, driving the Worker's app inside workerd with its
 * real bindings (see ./worker-request.ts).
 */
import { env } from "cloudflare:workers";
import { workerRequest } from "./worker-request";

export const ROOT = env.ROOT_TOKEN;

export interface VaultCall {
  token?: string | null;
  body?: unknown;
  headers?: Record<string, string>;
  rawBody?: BodyInit;
  /** Why this answer is deliberately outside the /v1 OpenAPI document (B14); skips that check. Keep rare. */
  outsideContract?: string;
}

export interface VaultAnswer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: test assertions walk arbitrary JSON
  json: any;
  text: string;
  headers: Headers;
}

/** Call /v1/<path> with the root token unless another (or null) is given. */
export async function vault(method: string, path: string, call: VaultCall = {}): Promise<VaultAnswer> {
  const headers: Record<string, string> = { ...call.headers };
  const token = call.token === undefined ? ROOT : call.token;
  if (token !== null) headers["X-Secrets-Token"] = token;
  let body: BodyInit | undefined = call.rawBody;
  if (call.body !== undefined) {
    body = JSON.stringify(call.body);
    headers["Content-Type"] = "application/json";
  }
  return workerRequest(
    `http://keyway.test/v1/${path.replace(/^\//, "")}`,
    { method, headers, body },
    { outsideContract: call.outsideContract },
  );
}

/** Create a policy and a token holding it (plus `default`); returns the token. */
export async function tokenWithPolicy(
  policy: Record<string, string[]>,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const name = `p-${crypto.randomUUID().slice(0, 8)}`;
  const rules: Record<string, { capabilities: string[] }> = {};
  for (const [path, capabilities] of Object.entries(policy)) rules[path] = { capabilities };
  const put = await vault("PUT", `sys/policies/acl/${name}`, { body: { policy: JSON.stringify({ path: rules }) } });
  if (put.status !== 204) throw new Error(`policy write failed: ${put.status} ${put.text}`);
  const created = await vault("POST", "auth/token/create", { body: { policies: [name], ...extra } });
  if (created.status !== 200) throw new Error(`token create failed: ${created.status} ${created.text}`);
  return created.json.auth.client_token as string;
}

/** A random role-style name. */
export function uniqueName(prefix = "r"): string {
  return `${prefix}-${crypto.randomUUID().slice(0, 8)}`;
}
