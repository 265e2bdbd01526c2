/**
 * The view token of a plan page (decision N8): `plan-url` ends in `?view=<token>`, a
 * credential that opens the page of exactly one run for 24 hours, so a person can review
 * an upgrade plan without an API token.
 *
 * Format: `<expiry>.<signature>`, the signed link of src/lib/crypto/signed-link.ts (B23)
 * with purpose `keyway-plan-view` and the run id: the MAC binds the run id and the expiry,
 * so a token for one run never opens another, and its expiry cannot be moved.
 * Nothing is stored; the token cannot be revoked before it expires (24 h at most).
 *
 * Pure apart from WebCrypto: runs in workerd and in Node (unit tests).
 */
import { signLink, verifySignedLink } from "../../lib/crypto/signed-link";

/** N8: a view token is valid for 24 hours. */
export const VIEW_TOKEN_TTL_SECONDS = 24 * 60 * 60;

/** The signed link's purpose (B23; domain separation from every other use of the key). */
const PURPOSE = "keyway-plan-view";

/** Why {@link verifyViewToken} refused a token (for logs and tests; the page answers alike). */
export type ViewTokenRefusal = "malformed" | "expired" | "bad-signature";

/** Result of {@link verifyViewToken}. */
export type ViewTokenVerdict = { ok: true; expiresAt: number } | { ok: false; reason: ViewTokenRefusal };

/**
 * Sign a view token for `runId`, valid from `nowMs` for 24 hours.
 *
 * @example
 * const token = await signViewToken(env.KEYWAY_HASH_KEY, run.id, Date.now());
 * const planUrl = `${origin}/app/${org}/workspaces/${name}/runs/${run.id}?view=${token}`;
 */
export async function signViewToken(secret: string, runId: string, nowMs: number): Promise<string> {
  const { expiry, signature } = await signLink(secret, { purpose: PURPOSE, id: runId }, nowMs, VIEW_TOKEN_TTL_SECONDS);
  return `${expiry}.${signature}`;
}

/**
 * Check a view token for `runId` at `nowMs`. Refused: anything not exactly
 * `<expiry>.<mac>`, an expiry in the past (or more than 24 h ahead, beyond a minute of clock
 * skew, which no signer of ours issues), and a MAC that does not match (constant time).
 */
export async function verifyViewToken(
  secret: string,
  runId: string,
  token: string,
  nowMs: number,
): Promise<ViewTokenVerdict> {
  if (token.length > 64) return { ok: false, reason: "malformed" };
  const dot = token.indexOf(".");
  if (dot < 0) return { ok: false, reason: "malformed" };
  return verifySignedLink(
    secret,
    { purpose: PURPOSE, id: runId },
    token.slice(0, dot),
    token.slice(dot + 1),
    nowMs,
    VIEW_TOKEN_TTL_SECONDS,
  );
}
