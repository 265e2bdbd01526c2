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
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { handleFetch } from "../../src/index";

export interface WorkerAnswer {
  status: number;
  /** The body parsed as JSON; null when empty or not JSON. */
  // biome-ignore lint/suspicious/noExplicitAny: test assertions walk arbitrary JSON
  json: any;
  text: string;
  headers: Headers;
}

/** Call the Worker; waits for the body and for any `waitUntil` work to finish. */
export async function workerRequest(url: string, init: RequestInit): Promise<WorkerAnswer> {
  const ctx = createExecutionContext();
  const res = await handleFetch(new Request(new URL(url, "http://keyway.test"), init), env, ctx);
  const text = await res.text();
  await waitOnExecutionContext(ctx);
  let json: unknown = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  return { status: res.status, json, text, headers: res.headers };
}
