/**
 * The per-isolate cache of /v1 callers (docs/performance.md): a presented token's context
 * (row, entity policies) and its compiled ACL, keyed by the token's keyed hash, so a
 * request with a non-root token costs no D1 read before its handler. The mechanism
 * (values shared, pending loads never; bounded; invalidation-safe) is
 * src/lib/isolate-cache/; the contract is the one of src/ssh/context-cache.ts.
 *
 * Consistency: every write in this isolate that changes what a cached caller may do —
 * a revocation (revokeTokenTree, which also removes the token's children, so all entries
 * go), a renewal, a policy write or delete, an entity write or delete — drops the entries
 * after the write, so the isolate that made it sees it at once. Writes made by another
 * isolate are seen after at most TOKEN_CONTEXT_TTL_MS: a revoked token never works past
 * that second. What must be exact is not taken from here: expiry is checked on every
 * request against the cached expire time, and uses of a `num_uses` token are counted
 * atomically in D1 (consumeTokenUse).
 *
 * N2b: only tokens that resolved are stored; an unknown or spent token stores nothing, so
 * unauthenticated requests cannot insert entries keyed by values they choose.
 * A leaf module apart from the pure cache, so the writers can import it without cycles.
 */
import { IsolateCache, MAX_CACHE_BYTES } from "../../lib/isolate-cache";
import type { Acl, PolicyRules } from "./acl-policy";
import type { TokenContext, TokenIdentity } from "./token-context";

/** How long a cached caller may be served without re-reading D1. */
export const TOKEN_CONTEXT_TTL_MS = 1000;

/**
 * Upper bound on cached callers per isolate. With tokens.ts's cap on the rules a cached
 * token may hold (16 Ki characters), the cache's memory stays bounded.
 */
const MAX_ENTRIES = 1024;

/** Keyed by the token's keyed hash (its row id). Entries are shared: readers copy before changing one. */
export const tokenContextCache = new IsolateCache<TokenContext | null>({
  name: "ssh-token-contexts",
  ttlMs: TOKEN_CONTEXT_TTL_MS,
  maxEntries: MAX_ENTRIES,
  maxBytes: MAX_CACHE_BYTES,
});

/**
 * What a repeated login needs besides its insert (S25, S27): the identity its last token
 * got, keyed by the alias (mount accessor, user claim value) that logged in. Held as long
 * as a cached caller and dropped by the same writes (invalidateTokenContexts), so the
 * policies a login answers are as fresh as the ones its token is then used with. Only
 * logins that made a token store an entry (N2b).
 */
export const loginIdentityCache = new IsolateCache<TokenIdentity>({
  name: "ssh-login-identities",
  ttlMs: TOKEN_CONTEXT_TTL_MS,
  maxEntries: MAX_ENTRIES,
  maxBytes: MAX_CACHE_BYTES,
});

/** A compiled ACL and the rules it was compiled from. */
export interface CompiledPolicies {
  rules: PolicyRules[];
  acl: Acl;
}

/**
 * Compiled ACLs by effective policy set (policySetKey), kept when a resolved caller is
 * cached and with the same freshness, so a login's new token enters the caller cache with
 * its ACL and the request that uses it next (`vault write ssh/sign/…` right after `vault
 * login`) reads nothing from D1 to resolve it. Dropped with the cached callers.
 */
export const compiledPolicyCache = new IsolateCache<CompiledPolicies>({
  name: "ssh-compiled-policies",
  ttlMs: TOKEN_CONTEXT_TTL_MS,
  maxEntries: 256,
  maxBytes: MAX_CACHE_BYTES,
});

/** The key of an effective policy set (names are sorted in a context). */
export function policySetKey(policies: readonly string[]): string {
  return policies.join("\n");
}

/** Drop one token's entry (after a write that changed only that token, e.g. a renewal). */
export function invalidateTokenContext(tokenId: string): void {
  tokenContextCache.delete(tokenId);
}

/** Drop every cached caller, login identity and compiled ACL (after a revocation, a policy write or an entity write). */
export function invalidateTokenContexts(): void {
  tokenContextCache.clear();
  loginIdentityCache.clear();
  compiledPolicyCache.clear();
}
