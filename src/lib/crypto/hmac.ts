/**
 * Keyed hashing of secrets that we must recognise but never store (decision B2):
 * tokens of both APIs and OTPs are kept only as HMAC-SHA-256 under KEYWAY_HASH_KEY.
 */
import { fromBase64, toHex, utf8 } from "../bytes";
import { IsolateCache } from "../isolate-cache";

/** Imported HMAC keys by KEYWAY_HASH_KEY value: a deployment secret, one entry in practice (B18). */
const keyCache = new IsolateCache<Promise<CryptoKey>>({ name: "hmac-keys", maxEntries: 4 });

/** Import (once per isolate) the HMAC key from its base64 secret (32 bytes, B6). */
export function hashKey(secret: string): Promise<CryptoKey> {
  let key = keyCache.peek(secret);
  if (!key) {
    const raw = fromBase64(secret.trim());
    if (raw.length < 32) throw new Error("KEYWAY_HASH_KEY must be base64 of 32 bytes");
    key = crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    keyCache.set(secret, key);
  }
  return key;
}

/**
 * Lowercase hex HMAC-SHA-256 of `value`, domain-separated by `purpose` so that the same
 * string used as a token and as an OTP never hashes alike.
 */
export async function keyedHash(secret: string, purpose: string, value: string): Promise<string> {
  const key = await hashKey(secret);
  const mac = await crypto.subtle.sign("HMAC", key, utf8(`${purpose}\u0000${value}`));
  return toHex(new Uint8Array(mac));
}

/**
 * Constant-time equality of two keyedHash results (hex of the same length, so nothing
 * about the secrets behind them leaks through the comparison's time).
 */
export function keyedHashesEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * SHA-256 digests of deployment secrets (ROOT_TOKEN, ADMIN_TOKEN), computed once per
 * isolate. B18: only values of the deployment's configuration are kept here, never a
 * value a client chose (those go through {@link presentedValuesEqual}).
 */
const deploymentSecretDigests = new IsolateCache<Promise<ArrayBuffer>>({
  name: "deployment-secret-digests",
  maxEntries: 8,
});

/** Constant-time equality of two equally long byte strings (WebCrypto's when the runtime has it). */
function bytesEqual(a: ArrayBuffer, b: ArrayBuffer): boolean {
  const subtle = crypto.subtle as SubtleCrypto & { timingSafeEqual?: (x: ArrayBuffer, y: ArrayBuffer) => boolean };
  if (subtle.timingSafeEqual) return subtle.timingSafeEqual(a, b);
  const x = new Uint8Array(a);
  const y = new Uint8Array(b);
  let diff = 0;
  for (let i = 0; i < x.length; i++) diff |= x[i]! ^ y[i]!;
  return diff === 0;
}

/**
 * Constant-time comparison of a presented secret with a DEPLOYMENT secret (`configured`
 * comes from the Worker's configuration, never from a request): compares their digests;
 * the configured secret's digest is computed once per isolate.
 */
export async function secretsEqual(presented: string, configured: string): Promise<boolean> {
  let configuredDigest = deploymentSecretDigests.peek(configured);
  if (!configuredDigest) {
    configuredDigest = crypto.subtle.digest("SHA-256", utf8(configured));
    deploymentSecretDigests.set(configured, configuredDigest);
  }
  const [da, db] = await Promise.all([crypto.subtle.digest("SHA-256", utf8(presented)), configuredDigest]);
  return bytesEqual(da, db);
}

/**
 * The per-isolate random key of {@link presentedValuesEqual}; one CryptoKey, never
 * derived from input (a single slot, not a collection).
 */
let comparisonKey: Promise<CryptoKey> | null = null;

/**
 * Constant-time comparison of two values that are not both deployment secrets (a CSRF
 * value a client sent against the one expected, a cookie-bound value): B18 says such
 * values are compared by constant-time HMAC and never kept. Both are MACed under a random
 * per-isolate key and the MACs compared, so neither the time taken nor any memory depends
 * on them.
 */
export async function presentedValuesEqual(a: string, b: string): Promise<boolean> {
  comparisonKey ??= crypto.subtle.importKey(
    "raw",
    crypto.getRandomValues(new Uint8Array(32)),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const key = await comparisonKey;
  const [ma, mb] = await Promise.all([
    crypto.subtle.sign("HMAC", key, utf8(a)),
    crypto.subtle.sign("HMAC", key, utf8(b)),
  ]);
  return bytesEqual(ma, mb);
}
