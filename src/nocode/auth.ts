/**
 * Who is calling /api/v2 (decisions N2a, N9, N10). The token is checked before routing;
 * any request without a valid token gets 401, unknown paths included.
 *
 * Tokens other than ADMIN_TOKEN are stored only as
 * `keyedHash(KEYWAY_HASH_KEY, "tfe-token", token)` (B2) in `nocode_tokens`.
 */
import { and, eq } from "drizzle-orm";
import { createDb, type Db } from "../db/client";
import { nocodeTokens, nocodeUsers, teams } from "../db/schema";
import { cachedNocode } from "./cache";
import { keyedHash, secretsEqual } from "../lib/crypto/hmac";
import { randomAlphanumeric } from "./ids";

/**
 * The authenticated caller: the site admin (ADMIN_TOKEN, N9/N10: bootstrap endpoints and
 * the release list only), a user, a team (team token) or an organization (its token).
 */
export type NocodeCaller =
  | { kind: "admin" }
  | { kind: "user"; userId: string; username: string }
  | { kind: "team"; teamId: string; organization: string }
  | { kind: "organization"; organization: string };

/** Purpose string of the keyed hash of no-code tokens (separates them from /v1 tokens). */
export const TOKEN_HASH_PURPOSE = "tfe-token";

/** `Authorization: Bearer <token>` (reference §1.1). */
export function bearerToken(headers: Headers): string | null {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(headers.get("authorization") ?? "");
  return m?.[1] ?? null;
}

/** A new token in HCP Terraform's shape: `<14 alnum>.atlasv1.<67 base62>` (reference §1.1). */
export function generateNocodeToken(): string {
  return `${randomAlphanumeric(14)}.atlasv1.${randomAlphanumeric(67)}`;
}

/** The stored form of a token (B2). */
export function hashNocodeToken(env: Pick<Env, "KEYWAY_HASH_KEY">, token: string): Promise<string> {
  return keyedHash(env.KEYWAY_HASH_KEY, TOKEN_HASH_PURPOSE, token);
}

/** Resolve a stored token hash to its caller, or null when unknown or its subject is gone. */
export async function callerForTokenHash(db: Db, hash: string): Promise<NocodeCaller | null> {
  // One D1 statement: the token row with its user or team (left joins; only the one its kind names matches).
  const row = await db
    .select({
      kind: nocodeTokens.kind,
      subjectId: nocodeTokens.subjectId,
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
  switch (row.kind) {
    case "user":
      return row.userId !== null && row.username !== null ? { kind: "user", userId: row.userId, username: row.username } : null;
    case "team":
      return row.teamOrganization !== null ? { kind: "team", teamId: row.subjectId, organization: row.teamOrganization } : null;
    case "organization":
      return { kind: "organization", organization: row.subjectId };
  }
}

/** Resolve a caller from the request, or null when the token is missing or unknown (→ 401). */
export async function authenticateNocode(env: Env, headers: Headers): Promise<NocodeCaller | null> {
  const token = bearerToken(headers);
  if (!token) return null;
  if (await secretsEqual(token, env.ADMIN_TOKEN)) return { kind: "admin" };
  // Cheap shape check before touching D1: every token we issue contains ".atlasv1.".
  if (!token.includes(".atlasv1.") || token.length > 200) return null;
  const hash = await hashNocodeToken(env, token);
  // N2b: only a found caller is kept; an unknown token (a key its sender chose) is not,
  // so unauthenticated requests can neither fill the cache nor evict what it holds.
  return cachedNocode(`token:${hash}`, () => callerForTokenHash(createDb(env.DB), hash), { keep: (caller) => caller !== null });
}
