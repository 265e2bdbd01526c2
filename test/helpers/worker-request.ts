/**
 * Send a request to the Worker's own fetch handler (`handleFetch`, exactly what the
 * default export serves) with the real bindings of the test runtime, and read the whole
 * answer.
 *
 * Why not `exports.default.fetch`: in the Workers Vitest plugin each request through the
 * default-export service binding gets slower as a test file's request count grows, badly
 * so when requests overlap (cloudflare/workers-sdk#15446), which made the suite take many
 * minutes. The handler is the same; only the transport into it differs. The entrypoint itself
 * is still covered by tests that use `exports.default.fetch` (test/worker/ssh/dispatcher.test.ts,
 * test/worker/nocode/app.test.ts).
 *
 * Decision B14: every answer is checked against the OpenAPI document the Worker serves for
 * its path (./openapi-check.ts), unless the call says why it is outside the contract.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { handleFetch } from "../../src/index";
import type { OpenApiDocument } from "../../src/lib/openapi/types";
import { assertWithinContract, CONTRACT_SOURCES, ContractChecker, type LoadedContract } from "./openapi-check";

export interface WorkerAnswer {
  status: number;
  /** The body parsed as JSON; null when empty or not JSON. */
  // biome-ignore lint/suspicious/noExplicitAny: test assertions walk arbitrary JSON
  json: any;
  text: string;
  headers: Headers;
}

export interface ContractOptions {
  /**
   * Why this answer is deliberately outside the API's OpenAPI document (for example a
   * request the contract cannot describe); the B14 check is skipped for it. Keep rare.
   */
  outsideContract?: string;
}

/** Call the Worker; waits for the body and for any `waitUntil` work to finish. */
export async function workerRequest(
  url: string,
  init: RequestInit,
  options: ContractOptions = {},
): Promise<WorkerAnswer> {
  const request = new Request(new URL(url, "http://keyway.test"), init);
  const ctx = createExecutionContext();
  const res = await handleFetch(request, env, ctx);
  const text = await res.text();
  await waitOnExecutionContext(ctx);
  let json: unknown = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  if (options.outsideContract === undefined) {
    const checker = await servedContracts();
    // The path as sent: `new URL` keeps percent-encoding, as the Worker sees it.
    assertWithinContract(checker, {
      method: request.method,
      path: new URL(request.url).pathname,
      status: res.status,
      headers: res.headers,
      text,
    });
  }
  return { status: res.status, json, text, headers: res.headers };
}

let contracts: Promise<ContractChecker> | undefined;

/**
 * The OpenAPI documents the Worker serves, fetched once per test file through the Worker
 * itself. A document not marked `served` that answers 401, 403 or 404 is not served yet
 * and its paths are not checked; any other failure to serve one fails the test file.
 */
export function servedContracts(): Promise<ContractChecker> {
  contracts ??= loadContracts();
  return contracts;
}

async function loadContracts(): Promise<ContractChecker> {
  const loaded: LoadedContract[] = [];
  for (const source of CONTRACT_SOURCES) {
    const ctx = createExecutionContext();
    const res = await handleFetch(new Request(`http://keyway.test${source.documentPath}`), env, ctx);
    const text = await res.text();
    await waitOnExecutionContext(ctx);
    if (!source.served && [401, 403, 404].includes(res.status)) continue;
    if (res.status !== 200) throw new Error(`GET ${source.documentPath} answered ${res.status}: ${text.slice(0, 300)}`);
    loaded.push({ source, document: JSON.parse(text) as OpenApiDocument });
  }
  return new ContractChecker(loaded);
}
