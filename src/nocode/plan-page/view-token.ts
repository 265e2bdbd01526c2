/**
 * The view token of a plan page (decision N8): `plan-url` ends in `?view=<token>`, a
 * credential that opens the page of exactly one run for 24 hours, so a person can review
 * an upgrade plan without an API token.
 *
 * Format: `<expiry>.<mac>`, where `expiry` is the Unix time in seconds (decimal, no sign,
 * no leading zeros) after which the token is refused, and `mac` is the base64url (no
 * padding) HMAC-SHA-256 under KEYWAY_HASH_KEY (B2, B6) of
 * `"keyway-plan-view\0" + runId + "\0" + expiry`. The MAC binds the run id and the
 * expiry: a token for one run never opens another, and its expiry cannot be moved.
 * Nothing is stored; the token cannot be revoked before it expires (24 h at most).
 *
 * Pure apart from WebCrypto: runs in workerd and in Node (unit tests).
 */
import { fromBase64, toBase64Url, utf8 } from "../../lib/bytes";

/** N8: a view token is valid for 24 hours. */
export const VIEW_TOKEN_TTL_SECONDS = 24 * 60 * 60;

/** Domain separation: the same key also hashes tokens and OTPs (src/lib/crypto/hmac.ts). */
const PURPOSE = "keyway-plan-view";

/** Why {@link verifyViewToken} refused a token (for logs and tests; the page answers alike). */
export type ViewTokenRefusal = "malformed" | "expired" | "bad-signature";

/** Result of {@link verifyViewToken}. */
export type ViewTokenVerdict = { ok: true; expiresAt: number } | { ok: false; reason: ViewTokenRefusal };

const keyCache = new Map<string, Promise<CryptoKey>>();

/**
 * The HMAC key from KEYWAY_HASH_KEY (base64 of 32 bytes, B6), imported once per isolate,
 * as src/lib/crypto/hmac.ts does, but able to `verify` (a constant-time comparison).
 */
function viewKey(secret: string): Promise<CryptoKey> {
  let key = keyCache.get(secret);
  if (!key) {
    const raw = fromBase64(secret.trim());
    if (raw.length < 32) throw new Error("KEYWAY_HASH_KEY must be base64 of 32 bytes");
    key = crypto.subtle.importKey("raw", raw as Uint8Array<ArrayBuffer>, { name: "HMAC", hash: "SHA-256" }, false, [
      "sign",
      "verify",
    ]);
    keyCache.set(secret, key);
  }
  return key;
}

/** The signed message: purpose, run id and expiry, NUL-separated (ids and decimals hold no NUL). */
function message(runId: string, expiry: number): Uint8Array<ArrayBuffer> {
  return utf8(`${PURPOSE}\u0000${runId}\u0000${expiry}`) as Uint8Array<ArrayBuffer>;
}

async function mac(secret: string, runId: string, expiry: number): Promise<string> {
  const bytes = await crypto.subtle.sign("HMAC", await viewKey(secret), message(runId, expiry));
  return toBase64Url(new Uint8Array(bytes));
}

/**
 * Sign a view token for `runId`, valid from `nowMs` for 24 hours.
 *
 * @example
 * const token = await signViewToken(env.KEYWAY_HASH_KEY, run.id, Date.now());
 * const planUrl = `${origin}/app/${org}/workspaces/${name}/runs/${run.id}?view=${token}`;
 */
export async function signViewToken(secret: string, runId: string, nowMs: number): Promise<string> {
  const expiry = Math.floor(nowMs / 1000) + VIEW_TOKEN_TTL_SECONDS;
  return `${expiry}.${await mac(secret, runId, expiry)}`;
}

/** Tolerated clock difference between the instance that signed and the one that verifies. */
const CLOCK_SKEW_SECONDS = 60;

/** A strict decimal of at most 12 digits without leading zeros. */
const EXPIRY = /^[1-9][0-9]{0,11}$/;
/** 32 bytes of base64url without padding. */
const MAC = /^[A-Za-z0-9_-]{43}$/;

/**
 * Check a view token for `runId` at `nowMs`. Refused: anything not exactly
 * `<expiry>.<mac>`, an expiry in the past (or more than 24 h ahead, beyond a minute of clock
 * skew, which no signer of ours issues), and a MAC that does not match (WebCrypto `verify`, constant time).
 */
export async function verifyViewToken(
  secret: string,
  runId: string,
  token: string,
  nowMs: number,
): Promise<ViewTokenVerdict> {
  if (token.length > 64) return { ok: false, reason: "malformed" };
  const dot = token.indexOf(".");
  const expiryText = token.slice(0, dot);
  const given = token.slice(dot + 1);
  if (dot < 0 || !EXPIRY.test(expiryText) || !MAC.test(given)) return { ok: false, reason: "malformed" };
  let givenBytes: Uint8Array;
  try {
    givenBytes = fromBase64(given);
  } catch {
    return { ok: false, reason: "malformed" };
  }
  // The last of 43 base64url characters carries 2 padding bits; a token whose padding
  // bits are not zero is another spelling of the same bytes: refuse it.
  if (toBase64Url(givenBytes) !== given) return { ok: false, reason: "malformed" };
  const expiry = Number(expiryText);
  const now = Math.floor(nowMs / 1000);
  // WebCrypto's verify compares in constant time. The MAC is checked before the expiry,
  // so a forged token learns nothing from which check failed.
  const valid = await crypto.subtle.verify(
    "HMAC",
    await viewKey(secret),
    givenBytes as Uint8Array<ArrayBuffer>,
    message(runId, expiry),
  );
  if (!valid) return { ok: false, reason: "bad-signature" };
  if (expiry <= now || expiry > now + VIEW_TOKEN_TTL_SECONDS + CLOCK_SKEW_SECONDS)
    return { ok: false, reason: "expired" };
  return { ok: true, expiresAt: expiry * 1000 };
}
