/**
 * Property-based fuzzing of both APIs against the real Worker ("prove the class
 * is gone"; decisions B3, B9, S2b, S13): fast-check generates requests — methods, paths
 * built from every route template with hostile segments and spellings, query strings,
 * bodies (JSON of any shape, JSON:API documents, Vault fields of wrong types, malformed
 * text) and credentials — and each answer must be
 * - never a 5xx,
 * - for a 4xx, in that API's error format: /v1 Vault's `{"errors":["…"]}` (strings;
 *   `[]` for a bare 404), /api/v2 and the registry protocol JSON:API's
 *   `{"errors":[{"status":"4xx","title":…}]}` with `application/vnd.api+json`, and under
 *   /app (the plan page, the console and its forms, B19) an HTML page (or the plan page's
 *   JSON error with `?format=json`),
 * - and answered at all (a request that times out means the service stopped answering).
 * The OTP race check issues OTPs and has several callers verify each at once: exactly one
 * may succeed (S13).
 *
 * This file sends the requests and judges the answers; ./requests.ts generates them,
 * ./fixtures.ts creates what they point at, ./otp-races.ts runs the OTP race check. Used by
 * test/interop/fuzz/fuzz.test.ts: a seed-fixed slice in the normal run, the full run with
 * `npm run fuzz` (KEYWAY_FUZZ=full).
 */
import fc from "fast-check";
import type { FuzzFixtures } from "./fixtures";
import { type FuzzRequest, type KnownIssueSwitches, requestArb } from "./requests";

export interface FuzzFailure {
  request: FuzzRequest;
  status: number | "timeout" | "network error";
  why: string;
  body: string;
}

export interface FuzzStats {
  sent: number;
  serverErrors: number;
  badFormat: number;
  timeouts: number;
  /** Answers made by wrangler's dev proxy, not the Worker (see isDevProxyFailure). */
  proxyFailures: number;
  /** Connections to the local server that failed and were retried once (not timeouts). */
  connectionRetries: number;
  failures: FuzzFailure[];
}

/**
 * wrangler's dev proxy (ProxyWorker, in front of the Worker under `npm start` and
 * unstable_startWorker) answers 503 "Your worker restarted mid-request" itself when its
 * loopback connection to the Worker's runtime fails (kj "Connection reset by peer",
 * "stream disconnected prematurely"), which happens now and then under concurrent load.
 * It takes every such network error for a restart because it compares the request's full
 * URL with the runtime's origin (templates/startDevWorker/ProxyWorker.ts, wrangler
 * 4.86.0). The Worker did not answer: every answer of the Worker carries X-Request-Id.
 * Counted and reported apart; a run fails when they exceed 1% (the service stops answering).
 */
export function isDevProxyFailure(status: number, headers: Headers, body: string): boolean {
  return status === 503 && !headers.has("x-request-id") && body.startsWith("Your worker restarted mid-request");
}

/** Why an answer breaks the contract, or null when it is fine. */
export function contractViolation(
  request: FuzzRequest,
  status: number,
  contentType: string,
  body: string,
): string | null {
  // The URL parser resolves `..` segments before sending (`/v1/../x` is `/x`): judge the
  // answer by the path the Worker received. Outside /v1, the root not-found is JSON:API's.
  const url = new URL(request.path, "http://x");
  const received = url.pathname;
  if (received === "/v1/sys/health" && askedHealthStatus(url, status, body)) return null;
  if (status >= 500) return `status ${status}`;
  if (status < 400 || request.method === "HEAD") return null;
  if (received === "/app" || received.startsWith("/app/")) {
    // The plan page and the console answer people: HTML, or the plan page's JSON errors
    // (`?format=json`) in JSON:API's shape with `application/json`.
    if (url.searchParams.get("format") === "json" && contentType.startsWith("application/json")) {
      try {
        const errors = (JSON.parse(body) as { errors?: { status?: string; title?: unknown }[] }).errors;
        if (!Array.isArray(errors) || errors.length === 0) return "plan page JSON error has no errors";
        if (!errors.every((e) => e.status === String(status) && typeof e.title === "string"))
          return "plan page JSON error status or title";
        return null;
      } catch {
        return "plan page error body is not JSON";
      }
    }
    return contentType.startsWith("text/html") ? null : `content type ${contentType} under /app`;
  }
  const api = received === "/v1" || received.startsWith("/v1/") ? "v1" : "v2";
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return "error body is not JSON";
  }
  const errors = (parsed as { errors?: unknown })?.errors;
  if (!Array.isArray(errors)) return "error body has no errors array";
  if (api === "v1") {
    if (!contentType.startsWith("application/json")) return `content type ${contentType}`;
    if (!errors.every((e) => typeof e === "string")) return "Vault errors must be strings";
    if (errors.length === 0 && status !== 404) return "empty errors outside a 404";
    return null;
  }
  if (!contentType.startsWith("application/vnd.api+json")) return `content type ${contentType}`;
  if (errors.length === 0) return "JSON:API errors is empty";
  for (const e of errors as Record<string, unknown>[]) {
    if (typeof e !== "object" || e === null) return "JSON:API error is not an object";
    if (e.status !== String(status)) return `JSON:API error status ${String(e.status)} differs from ${status}`;
    if (typeof e.title !== "string") return "JSON:API error has no title";
  }
  return null;
}

/**
 * Whether a `sys/health` answer is the status its caller asked for: Vault answers the
 * health body (or nothing, for 204, 205 and 304) with the status of `activecode` (Keyway
 * is always active, B19), whatever that status is, 4xx and 5xx included.
 */
function askedHealthStatus(url: URL, status: number, body: string): boolean {
  if (url.searchParams.get("activecode") !== String(status)) return false;
  if (body === "") return true;
  try {
    return typeof (JSON.parse(body) as { initialized?: unknown }).initialized === "boolean";
  } catch {
    return false;
  }
}

/** Send one request; the answer's status, content type and body, or why there was none. */
async function send(f: FuzzFixtures, r: FuzzRequest, timeoutMs: number) {
  try {
    const res = await fetch(`${f.url}${r.path}`, {
      method: r.method,
      headers: r.headers,
      body: r.body,
      signal: AbortSignal.timeout(timeoutMs),
    });
    const body = await res.text();
    if (isDevProxyFailure(res.status, res.headers, body))
      return { status: "dev proxy" as const, contentType: "", body };
    return { status: res.status, contentType: res.headers.get("content-type") ?? "", body };
  } catch (err) {
    const name = (err as Error).name;
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const detail = `${String(err)}${cause ? ` (${cause.code ?? ""} ${cause.message ?? ""})` : ""}`;
    return {
      status: name === "TimeoutError" || name === "AbortError" ? ("timeout" as const) : ("network error" as const),
      contentType: "",
      body: detail,
    };
  }
}

/** Send `count` generated requests, `concurrency` at a time; collects every violation. */
export async function runApiFuzz(
  f: FuzzFixtures,
  options: { count: number; seed: number; concurrency: number; known: KnownIssueSwitches; timeoutMs?: number },
): Promise<FuzzStats> {
  const stats: FuzzStats = {
    sent: 0,
    serverErrors: 0,
    badFormat: 0,
    timeouts: 0,
    proxyFailures: 0,
    connectionRetries: 0,
    failures: [],
  };
  const requests = fc.sample(requestArb(f, options.known), { numRuns: options.count, seed: options.seed });
  let next = 0;
  const worker = async () => {
    while (next < requests.length) {
      const r = requests[next++]!;
      let answer = await send(f, r, options.timeoutMs ?? 30_000);
      stats.sent++;
      // A connection the local server reset (keep-alive races of the dev proxy under load)
      // is retried once; a second failure, or any timeout, counts as not answering.
      if (answer.status === "network error") {
        stats.connectionRetries++;
        answer = await send(f, r, options.timeoutMs ?? 30_000);
      }
      if (answer.status === "dev proxy") {
        stats.proxyFailures++;
        continue;
      }
      if (typeof answer.status !== "number") {
        stats.timeouts++;
        stats.failures.push({ request: r, status: answer.status, why: "no answer", body: answer.body });
        continue;
      }
      const why = contractViolation(r, answer.status, answer.contentType, answer.body);
      if (!why) continue;
      if (answer.status >= 500) stats.serverErrors++;
      else stats.badFormat++;
      stats.failures.push({ request: r, status: answer.status, why, body: answer.body.slice(0, 300) });
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  return stats;
}
