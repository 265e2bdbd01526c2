/**
 * Which SignInStore instance serves a scope, and the client address a rate limit counts
 * (decisions B21, S28). Both wings call these; this module imports neither.
 *
 * A scope is prefixed by its wing (B21): `ssh:<auth mount accessor>` for an SSH auth mount
 * (the accessor changes when a mount is disabled and enabled again, so a new mount never
 * inherits the old one's states or counts), `nocode:<organization>` for an organization's
 * single sign-on.
 */
import { toBase64Url } from "../lib/bytes";
import { ipKey, isIpv4Mapped, parseIp } from "../lib/net/ip";
import type { SignInStore } from "./sign-in-store";

export type SignInScope = `ssh:${string}` | `nocode:${string}`;

/** The SignInStore instance of a scope. */
export function signInStore(env: Env, scope: SignInScope): DurableObjectStub<SignInStore> {
  // worker-configuration.d.ts types the binding without its class; the class is SignInStore.
  const namespace = env.SIGN_IN_STORE as unknown as DurableObjectNamespace<SignInStore>;
  return namespace.get(namespace.idFromName(scope));
}

/**
 * The key a client's requests are counted under (S28): its `CF-Connecting-IP`, an IPv6
 * address reduced to its /64 (one subscriber's usual allocation, so rotating addresses
 * within it does not multiply the limit). Without the header (not behind Cloudflare's
 * edge, e.g. some local runs) every request shares the key `unknown`.
 */
export function clientAddressKey(headers: Headers): string {
  const header = headers.get("CF-Connecting-IP");
  const addr = header === null ? null : parseIp(header);
  if (!addr) return "unknown";
  if (isIpv4Mapped(addr)) return ipKey(addr);
  return `${ipKey(addr.slice(0, 8))}/64`;
}

/** A fresh state (or any single-use handle): 32 random bytes, base64url without padding. */
export function newSignInState(): string {
  return toBase64Url(crypto.getRandomValues(new Uint8Array(32)));
}
