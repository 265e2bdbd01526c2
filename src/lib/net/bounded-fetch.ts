/**
 * Outbound GETs of documents a configuration names (decision S25: OIDC discovery and
 * JWKS): a deadline, no redirects (a redirect is a failure), and a cap on the body read,
 * so no configured URL can make a request wait long or hold much memory. The URL rules
 * (`https://`, plain `http://` only for loopback) are checked by `checkFetchableUrl`.
 */

import { joinBytes } from "../bytes";

export class BoundedFetchError extends Error {}

export interface BoundedFetchOptions {
  /** Give up after this long (the whole exchange, body included). */
  timeoutMs: number;
  /** Most bytes of body read; a longer body is a failure. */
  maxBytes: number;
  headers?: Record<string, string>;
}

/** Fetch `url` and parse its body as JSON within the bounds; throws BoundedFetchError on any failure. */
export async function fetchJsonBounded(url: string, options: BoundedFetchOptions): Promise<unknown> {
  const text = await fetchTextBounded(url, options);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new BoundedFetchError(`${url}: the answer is not JSON`);
  }
}

async function fetchTextBounded(url: string, options: BoundedFetchOptions): Promise<string> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), options.timeoutMs);
  try {
    let response: Response;
    try {
      response = await fetch(url, {
        method: "GET",
        redirect: "manual",
        signal: controller.signal,
        headers: { Accept: "application/json", ...options.headers },
      });
    } catch (err) {
      throw new BoundedFetchError(
        controller.signal.aborted ? `${url}: no answer within ${options.timeoutMs} ms` : `${url}: ${String(err)}`,
      );
    }
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel();
      throw new BoundedFetchError(`${url}: answered a redirect (${response.status}), which is not followed`);
    }
    if (response.status !== 200) {
      await response.body?.cancel();
      throw new BoundedFetchError(`${url}: answered ${response.status}`);
    }
    const declared = Number(response.headers.get("content-length") ?? Number.NaN);
    if (Number.isFinite(declared) && declared > options.maxBytes) {
      await response.body?.cancel();
      throw new BoundedFetchError(`${url}: the answer is larger than ${options.maxBytes} bytes`);
    }
    return await readCapped(response, options.maxBytes, url, controller);
  } finally {
    clearTimeout(timer);
  }
}

async function readCapped(response: Response, maxBytes: number, url: string, controller: AbortController) {
  const bytes = await readCappedBytes(
    response,
    maxBytes,
    controller,
    (reason) => new BoundedFetchError(`${url}: ${reason}`),
  );
  return new TextDecoder().decode(bytes);
}

/**
 * Reads a response body of at most `maxBytes`, cancelling the stream once it grows past
 * that. Every failure (too large, cut off, timed out through `controller`) is thrown as
 * `fail(reason)`, so each caller keeps its own error type.
 */
export async function readCappedBytes(
  response: Response,
  maxBytes: number,
  controller: AbortController,
  fail: (reason: string) => Error,
): Promise<Uint8Array<ArrayBuffer>> {
  if (!response.body) return new Uint8Array(0);
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  let tooLarge = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        tooLarge = true;
        await reader.cancel();
        break;
      }
      chunks.push(value);
    }
  } catch (err) {
    throw fail(controller.signal.aborted ? "no complete answer in time" : `${err}`);
  }
  if (tooLarge) throw fail(`the answer is larger than ${maxBytes} bytes`);
  return joinBytes(chunks);
}

/**
 * S25: a discovery or JWKS URL must be `https://`, or `http://` to a loopback host
 * (local development and tests). Returns the reason it is not, or null.
 */
export function checkFetchableUrl(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return "not a valid URL";
  }
  if (url.protocol === "https:") return null;
  if (url.protocol === "http:" && isLoopbackHost(url.hostname)) return null;
  return "must use https:// (plain http:// only for a loopback host)";
}

/** `localhost`, 127.0.0.0/8 or ::1. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (host === "localhost" || host === "::1") return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}
