/**
 * Signed links (decision B23): a link that carries its own credential carries an HMAC
 * over (purpose, id, expiry), so it opens exactly one thing, for one use case, until it
 * expires, and nothing is stored. Used by the plan page's view token (N8) and the registry
 * download link (B13); later links (JSON plan and state downloads, `log-read-url`) take the
 * same helper with their own purpose. docs/signed-links.md describes the format.
 *
 * Signature: base64url without padding of HMAC-SHA-256 under KEYWAY_HASH_KEY (B6) of
 * `purpose + "\0" + id + "\0" + expiry`, where `expiry` is the Unix time in seconds
 * (decimal, no sign, no leading zeros) after which the link is refused. Purposes keep links
 * of one kind from opening another (B2's domain separation; the same key hashes tokens
 * and OTPs, see ./hmac.ts). Ids and decimals hold no NUL, so the message is unambiguous.
 *
 * What serves a signed link answers it with {@link SIGNED_LINK_HEADERS} and answers 404
 * to any refusal (B23), whatever the reason, so a refusal tells nothing.
 *
 * Pure apart from WebCrypto: runs in workerd and in Node.
 */
import { fromBase64, toBase64Url, utf8 } from "../bytes";
import { hashKey } from "./hmac";

/** B23: every answer of a signed link: never cached, never leaked through a Referer. */
export const SIGNED_LINK_HEADERS = { "Cache-Control": "no-store", "Referrer-Policy": "no-referrer" } as const;

/** Why {@link verifySignedLink} refused (for logs and tests; what serves the link answers 404 alike). */
export type SignedLinkRefusal = "malformed" | "expired" | "bad-signature";

/** Result of {@link verifySignedLink}. */
export type SignedLinkVerdict = { ok: true; expiresAt: number } | { ok: false; reason: SignedLinkRefusal };

/** What a signature covers. */
export interface SignedLinkClaim {
  /** The kind of link (e.g. `keyway-plan-view`, `registry-download`). */
  purpose: string;
  /** What the link opens (a run id, a version id). */
  id: string;
}

/** Tolerated clock difference between the instance that signed and the one that verifies. */
const CLOCK_SKEW_SECONDS = 60;

/** A strict decimal of at most 12 digits without leading zeros. */
const EXPIRY = /^[1-9][0-9]{0,11}$/;
/** 32 bytes of base64url without padding. */
const SIGNATURE = /^[A-Za-z0-9_-]{43}$/;

async function mac(secret: string, claim: SignedLinkClaim, expiry: number): Promise<Uint8Array> {
  const message = utf8(`${claim.purpose}\u0000${claim.id}\u0000${expiry}`);
  return new Uint8Array(await crypto.subtle.sign("HMAC", await hashKey(secret), message));
}

/**
 * The expiry (Unix seconds) and signature of a link for `claim`, valid `lifetimeSeconds`
 * from `nowMs`.
 *
 * @example
 * const { expiry, signature } = await signLink(env.KEYWAY_HASH_KEY, { purpose: "registry-download", id }, Date.now(), 300);
 * const link = `${origin}/…/archive?expires=${expiry}&signature=${signature}`;
 */
export async function signLink(
  secret: string,
  claim: SignedLinkClaim,
  nowMs: number,
  lifetimeSeconds: number,
): Promise<{ expiry: number; signature: string }> {
  const expiry = Math.floor(nowMs / 1000) + lifetimeSeconds;
  return { expiry, signature: toBase64Url(await mac(secret, claim, expiry)) };
}

/**
 * Check a link's `expiry` and `signature` (as they came, text) for `claim` at `nowMs`.
 * Refused: an expiry or signature not in the exact form {@link signLink} writes (a
 * signature with non-zero padding bits included), a signature that does not match
 * (constant-time comparison, checked before the expiry so a forgery learns nothing from
 * which check failed), an expiry in the past, or one further ahead than `maxLifetimeSeconds`
 * (beyond a minute of clock skew), which no signer of ours issues.
 */
export async function verifySignedLink(
  secret: string,
  claim: SignedLinkClaim,
  expiryText: string,
  signature: string,
  nowMs: number,
  maxLifetimeSeconds: number,
): Promise<SignedLinkVerdict> {
  if (!EXPIRY.test(expiryText) || !SIGNATURE.test(signature)) return { ok: false, reason: "malformed" };
  let given: Uint8Array;
  try {
    given = fromBase64(signature);
  } catch {
    return { ok: false, reason: "malformed" };
  }
  // The last of 43 base64url characters carries 2 padding bits; a signature whose padding
  // bits are not zero is another spelling of the same bytes: refuse it.
  if (toBase64Url(given) !== signature) return { ok: false, reason: "malformed" };
  const expiry = Number(expiryText);
  const expected = await mac(secret, claim, expiry);
  let diff = given.length ^ expected.length;
  for (let i = 0; i < expected.length; i++) diff |= (given[i] ?? 0) ^ expected[i]!;
  if (diff !== 0) return { ok: false, reason: "bad-signature" };
  const now = Math.floor(nowMs / 1000);
  if (expiry <= now || expiry > now + maxLifetimeSeconds + CLOCK_SKEW_SECONDS) return { ok: false, reason: "expired" };
  return { ok: true, expiresAt: expiry * 1000 };
}
