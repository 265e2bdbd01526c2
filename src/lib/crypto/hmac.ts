/**
 * Keyed hashing of secrets that we must recognise but never store (decision B2):
 * tokens of both APIs and OTPs are kept only as HMAC-SHA-256 under KEYWAY_HASH_KEY.
 */
import { fromBase64, toHex, utf8 } from "../bytes";

const keyCache = new Map<string, Promise<CryptoKey>>();

/** Import (once per isolate) the HMAC key from its base64 secret (32 bytes, B6). */
export function hashKey(secret: string): Promise<CryptoKey> {
  let key = keyCache.get(secret);
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

const configuredDigests = new Map<string, Promise<ArrayBuffer>>();

/**
 * Constant-time comparison of a presented secret with a configured one (compares their
 * digests). The configured secret's digest is computed once per isolate.
 */
export async function secretsEqual(presented: string, configured: string): Promise<boolean> {
  let configuredDigest = configuredDigests.get(configured);
  if (!configuredDigest) {
    configuredDigest = crypto.subtle.digest("SHA-256", utf8(configured));
    configuredDigests.set(configured, configuredDigest);
  }
  const [da, db] = await Promise.all([crypto.subtle.digest("SHA-256", utf8(presented)), configuredDigest]);
  const subtle = crypto.subtle as SubtleCrypto & { timingSafeEqual?: (x: ArrayBuffer, y: ArrayBuffer) => boolean };
  if (subtle.timingSafeEqual) return subtle.timingSafeEqual(da, db);
  const x = new Uint8Array(da);
  const y = new Uint8Array(db);
  let diff = 0;
  for (let i = 0; i < x.length; i++) diff |= x[i]! ^ y[i]!;
  return diff === 0;
}
