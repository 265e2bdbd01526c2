/**
 * Who is calling /api/v2 (decisions N2a, N9, N10). The token is checked before routing;
 * any request without a valid token gets 401, unknown paths included.
 *
 * Tokens other than ADMIN_TOKEN are stored only as
 * `keyedHash(KEYWAY_HASH_KEY, "tfe-token", token)` (B2) in `nocode_tokens`.
 */

import { and, eq, isNull, lte, or } from "drizzle-orm";
import { createDb, type Db } from "../../db/client";
import { nocodeTokens, nocodeUsers, teams } from "../../db/schema/nocode";
import { keyedHash, secretsEqual } from "../../lib/crypto/hmac";
import { bearerCredential } from "../../lib/http/bearer";
import { IsolateCache } from "../../lib/isolate-cache";
import { cachedNocode } from "../cache";
import { randomAlphanumeric } from "../ids";

/**
 * The authenticated caller: the site admin (ADMIN_TOKEN, N9/N10: bootstrap endpoints and
 * the release list only), a user, a team (team token) or an organization (its token).
 */
export type NocodeCaller =
  | { kind: "admin" }
  | {
      kind: "user";
      userId: string;
      username: string;
      /** N16: a console SSO session carries only this organization's rights (every other one is 404). */
      onlyOrganization?: string;
    }
  | { kind: "team"; teamId: string; organization: string }
  | { kind: "organization"; organization: string };

/** Purpose string of the keyed hash of no-code tokens (separates them from /v1 tokens). */
export const TOKEN_HASH_PURPOSE = "tfe-token";

/** `Authorization: Bearer <token>` (HCP Terraform's API authentication): a single token, no whitespace inside. */
export function bearerToken(headers: Headers): string | null {
  const credential = bearerCredential(headers.get("authorization"));
  return credential && !/\s/.test(credential) ? credential : null;
}

/** A new token in HCP Terraform's shape: `<14 alnum>.atlasv1.<67 base62>` (HCP Terraform's API authentication). */
export function generateNocodeToken(): string {
  return `${randomAlphanumeric(14)}.atlasv1.${randomAlphanumeric(67)}`;
}

/** The stored form of a token (B2). */
export function hashNocodeToken(env: Pick<Env, "KEYWAY_HASH_KEY">, token: string): Promise<string> {
  return keyedHash(env.KEYWAY_HASH_KEY, TOKEN_HASH_PURPOSE, token);
}

/** A stored token as a request needs it: its caller, and its N13 lifecycle fields. */
export interface ResolvedToken {
  caller: NocodeCaller;
  /** The token's public id (`at-…`). */
  tokenId: string;
  lastUsedAt: number | null;
  expiredAt: number | null;
}

/** N13: last-used-at is written at most once a minute per token. */
export const LAST_USED_WRITE_INTERVAL_MS = 60_000;

/** Resolve a stored token hash, or null when unknown or its subject is gone. */
export async function resolveTokenHash(db: Db, hash: string): Promise<ResolvedToken | null> {
  // One D1 statement: the token row with its user or team (left joins; only the one its kind names matches).
  const row = await db
    .select({
      id: nocodeTokens.id,
      kind: nocodeTokens.kind,
      subjectId: nocodeTokens.subjectId,
      lastUsedAt: nocodeTokens.lastUsedAt,
      expiredAt: nocodeTokens.expiredAt,
      userId: nocodeUsers.id,
      username: nocodeUsers.username,
      teamOrganization: teams.organization,
    })
    .from(nocodeTokens)
    .leftJoin(nocodeUsers, and(eq(nocodeTokens.kind, "user"), eq(nocodeUsers.id, nocodeTokens.subjectId)))
    .leftJoin(teams, and(eq(nocodeTokens.kind, "team"), eq(teams.id, nocodeTokens.subjectId)))
    .where(eq(nocodeTokens.hash, hash))
    .get();
  if (!row) return null;
  let caller: NocodeCaller | null;
  switch (row.kind) {
    case "user":
      caller =
        row.userId !== null && row.username !== null
          ? { kind: "user", userId: row.userId, username: row.username }
          : null;
      break;
    case "team":
      caller =
        row.teamOrganization !== null
          ? { kind: "team", teamId: row.subjectId, organization: row.teamOrganization }
          : null;
      break;
    case "organization":
      caller = { kind: "organization", organization: row.subjectId };
      break;
    case "agent":
      // N17: an agent token reaches only the agent protocol; everywhere else it is no caller (401).
      caller = null;
      break;
  }
  return caller ? { caller, tokenId: row.id, lastUsedAt: row.lastUsedAt, expiredAt: row.expiredAt } : null;
}

/** N13: a token whose `expired-at` has passed no longer authenticates. */
function isExpired(token: Pick<ResolvedToken, "expiredAt">, now: number): boolean {
  return token.expiredAt !== null && token.expiredAt <= now;
}

/** The request's waitUntil; a direct `app.fetch` without an execution context just lets the promise run. */
export function waitUntilOf(c: {
  executionCtx: { waitUntil(promise: Promise<unknown>): void };
}): (promise: Promise<unknown>) => void {
  return (promise) => {
    try {
      c.executionCtx.waitUntil(promise);
    } catch {
      // Hono throws when the app was called without an ExecutionContext.
    }
  };
}

/**
 * Tokens whose last-used-at this isolate wrote: token id → the stored value it replaced.
 * While the cached row still shows that value, the write is done (bounded).
 */
const lastUsedWrites = new IsolateCache<{ replaced: number | null }>({
  name: "nocode-last-used-writes",
  maxEntries: 4096,
});

/**
 * N13: record a use of `token`, at most once a minute per token. The UPDATE is itself
 * conditional on the stored value, so isolates racing on one token write it once; this
 * isolate's memory only saves D1 the round trip while its cached row is not yet re-read.
 */
async function recordUse(db: Db, token: ResolvedToken, now: number): Promise<void> {
  if (token.lastUsedAt !== null && now - token.lastUsedAt < LAST_USED_WRITE_INTERVAL_MS) return;
  if (lastUsedWrites.peek(token.tokenId)?.replaced === token.lastUsedAt) return;
  lastUsedWrites.set(token.tokenId, { replaced: token.lastUsedAt });
  await db
    .update(nocodeTokens)
    .set({ lastUsedAt: now })
    .where(
      and(
        eq(nocodeTokens.id, token.tokenId),
        or(isNull(nocodeTokens.lastUsedAt), lte(nocodeTokens.lastUsedAt, now - LAST_USED_WRITE_INTERVAL_MS)),
      ),
    )
    .run();
}

/**
 * Resolve a caller from the request, or null when the token is missing, unknown or
 * expired (→ 401). The only place a no-code token is looked up (the API, the plan page,
 * the console). Lookups are served from the per-isolate cache (../cache.ts) for at most
 * NOCODE_CACHE_TTL_MS, so a revoked token stops working at once on an isolate that has
 * not cached it and within that TTL everywhere; expiry is checked on every request.
 * With `waitUntil`, a use is recorded in last-used-at after the answer (N13).
 */
export async function authenticateNocode(
  env: Env,
  headers: Headers,
  waitUntil?: (promise: Promise<unknown>) => void,
): Promise<NocodeCaller | null> {
  const token = bearerToken(headers);
  if (!token) return null;
  if (await secretsEqual(token, env.ADMIN_TOKEN)) return { kind: "admin" };
  // Cheap shape check before touching D1: every token we issue contains ".atlasv1.".
  if (!token.includes(".atlasv1.") || token.length > 200) return null;
  return resolveStoredToken(env, await hashNocodeToken(env, token), waitUntil);
}

/**
 * The caller of a stored token hash, or null when unknown, expired or its subject is gone:
 * the one resolution every credential of the no-code wing goes through (the API's Bearer
 * tokens and the console's sessions, which keep only the hash of the token they were opened
 * with, N14), so a token's lifecycle rules (N13) apply to both alike. Expiry is checked on
 * every request, whatever the cache holds; with `waitUntil`, the use is recorded.
 */
export async function resolveStoredToken(
  env: Pick<Env, "DB">,
  hash: string,
  waitUntil?: (promise: Promise<unknown>) => void,
): Promise<NocodeCaller | null> {
  const db = createDb(env.DB);
  // N2b: only a found token is kept; an unknown one (a key its sender chose) is not, so
  // unauthenticated requests can neither fill the cache nor evict what it holds.
  const resolved = await cachedNocode(`token:${hash}`, () => resolveTokenHash(db, hash), {
    keep: (token) => token !== null,
  });
  const now = Date.now();
  if (!resolved || isExpired(resolved, now)) return null;
  if (waitUntil) {
    waitUntil(
      recordUse(db, resolved, now).catch(() => {
        // A missed last-used-at is not worth failing or logging a request for; N13 lets it lag.
      }),
    );
  }
  return resolved.caller;
}
