/**
 * Who is calling /api/v2 (decisions N2a, N10). The token is checked before routing; any
 * request without a valid token gets 401, unknown paths included.
 */
import { secretsEqual } from "../lib/crypto/hmac";

/** The authenticated caller. More kinds (user, team, organization tokens) come with N9. */
export type NocodeCaller = { kind: "admin" };

/** `Authorization: Bearer <token>` (reference §1.1). */
export function bearerToken(headers: Headers): string | null {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(headers.get("authorization") ?? "");
  return m?.[1] ?? null;
}

/** Resolve a caller from the request, or null when the token is missing or unknown. */
export async function authenticateNocode(env: Env, headers: Headers): Promise<NocodeCaller | null> {
  const token = bearerToken(headers);
  if (!token) return null;
  if (await secretsEqual(token, env.ADMIN_TOKEN)) return { kind: "admin" };
  return null;
}
