/**
 * Encryption of secrets at rest (decision B2): AES-256-GCM under KEYWAY_KEK.
 *
 * KEYWAY_KEK is `base64` or `id:base64[,id:base64…]` (B6). The first key encrypts; every
 * listed key decrypts. A ciphertext is `v1.<key id>.<base64url iv>.<base64url ct+tag>`,
 * so keys rotate by prepending a new one.
 */
import { fromBase64, fromUtf8, randomBytes, toBase64Url, utf8 } from "../bytes";

interface Keyring {
  primaryId: string;
  keys: Map<string, Promise<CryptoKey>>;
}

const keyrings = new Map<string, Keyring>();

/** Parse KEYWAY_KEK into a keyring (cached per isolate). A bare key gets the id `k0`. */
export function keyring(secret: string): Keyring {
  const cached = keyrings.get(secret);
  if (cached) return cached;
  const keys = new Map<string, Promise<CryptoKey>>();
  let primaryId = "";
  for (const entry of secret.split(",").map((s) => s.trim()).filter(Boolean)) {
    const colon = entry.indexOf(":");
    const id = colon > 0 ? entry.slice(0, colon) : "k0";
    const raw = fromBase64(colon > 0 ? entry.slice(colon + 1) : entry);
    if (raw.length !== 32) throw new Error(`KEYWAY_KEK key "${id}" must be base64 of 32 bytes`);
    if (!/^[A-Za-z0-9_-]+$/.test(id)) throw new Error("KEYWAY_KEK key ids use letters, digits, - and _");
    if (!primaryId) primaryId = id;
    keys.set(id, crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt", "decrypt"]));
  }
  if (!primaryId) throw new Error("KEYWAY_KEK is empty");
  const ring = { primaryId, keys };
  keyrings.set(secret, ring);
  return ring;
}

/**
 * Encrypt `plaintext`; `context` is bound as additional data (e.g. `ssh-ca:<mount>`), so
 * a ciphertext copied to another row does not decrypt.
 */
export async function encryptSecret(secret: string, context: string, plaintext: string): Promise<string> {
  const ring = keyring(secret);
  const key = await ring.keys.get(ring.primaryId)!;
  const iv = randomBytes(12);
  const ct = await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: utf8(context) }, key, utf8(plaintext));
  return `v1.${ring.primaryId}.${toBase64Url(iv)}.${toBase64Url(new Uint8Array(ct))}`;
}

/** Decrypt what encryptSecret wrote. Throws if the key id is unknown or the data was altered. */
export async function decryptSecret(secret: string, context: string, ciphertext: string): Promise<string> {
  const parts = ciphertext.split(".");
  if (parts.length !== 4 || parts[0] !== "v1") throw new Error("unrecognised ciphertext format");
  const key = keyring(secret).keys.get(parts[1]!);
  if (!key) throw new Error(`no KEYWAY_KEK entry for key id "${parts[1]}"`);
  const pt = await crypto.subtle.decrypt(
    { name: "AES-GCM", iv: fromBase64(parts[2]!), additionalData: utf8(context) },
    await key,
    fromBase64(parts[3]!),
  );
  return fromUtf8(new Uint8Array(pt));
}
