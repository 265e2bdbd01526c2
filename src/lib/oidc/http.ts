/**
 * The fetch the relying party hands to oauth4webapi (decisions S25, S26): every call to
 * the OpenID Provider's token and userinfo endpoints has a deadline, follows no redirect
 * (a redirect is a failure) and reads at most a fixed number of bytes, so no provider can
 * make a sign-in wait long or hold much memory.
 */
import { isLoopbackHost, readCappedBytes } from "../net/bounded-fetch";

/** S26: each call to the provider gives up after this long, body included. */
export const PROVIDER_TIMEOUT_MS = 5_000;
/** S26: at most this many bytes of any answer (userinfo ≤ 64 KiB; a token answer carries a ≤ 16 KiB ID token). */
export const PROVIDER_MAX_BYTES = 64 * 1024;

/** A provider call that failed within Keyway's bounds (not an OAuth error answer). */
export class ProviderFetchError extends Error {}

/**
 * S25: an endpoint must be `https://`, or `http://` to a loopback host (local development
 * and tests). True when `url` may be fetched.
 */
export function fetchableEndpoint(url: URL): boolean {
  if (url.protocol === "https:") return true;
  return url.protocol === "http:" && isLoopbackHost(url.hostname);
}

/**
 * A `fetch` for oauth4webapi's `customFetch`: the same request with `redirect: "manual"`
 * and a 5 s deadline; a 3xx answer, an oversized body or a late answer throws
 * ProviderFetchError. The answer is returned fully read, as a new Response.
 */
export async function boundedProviderFetch(url: string, init: RequestInit): Promise<Response> {
  const target = new URL(url);
  if (!fetchableEndpoint(target)) throw new ProviderFetchError(`${target.origin}: must use https://`);
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), PROVIDER_TIMEOUT_MS);
  try {
    let response: Response;
    try {
      response = await fetch(url, {
        method: init.method,
        headers: init.headers,
        // A form as text, not a stream: a refused connection then leaves no body pump behind.
        body: init.body instanceof URLSearchParams ? init.body.toString() : init.body,
        redirect: "manual",
        signal: controller.signal,
      });
    } catch (err) {
      throw new ProviderFetchError(
        controller.signal.aborted ? `${target.origin}: no answer within ${PROVIDER_TIMEOUT_MS} ms` : `${err}`,
      );
    }
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel();
      throw new ProviderFetchError(`${target.origin}: answered a redirect (${response.status}), which is not followed`);
    }
    const body = await readCapped(response, controller);
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  } finally {
    clearTimeout(timer);
  }
}

async function readCapped(response: Response, controller: AbortController): Promise<Uint8Array<ArrayBuffer>> {
  const declared = Number(response.headers.get("content-length") ?? Number.NaN);
  if (Number.isFinite(declared) && declared > PROVIDER_MAX_BYTES) {
    await response.body?.cancel();
    throw new ProviderFetchError(`the answer is larger than ${PROVIDER_MAX_BYTES} bytes`);
  }
  return readCappedBytes(response, PROVIDER_MAX_BYTES, controller, (reason) => new ProviderFetchError(reason));
}
