/**
 * Encryption of secrets at rest (decision B2): AES-256-GCM under KEYWAY_KEK.
 *
 * KEYWAY_KEK is `base64` or `id:base64[,id:base64…]` (B6). The first key encrypts; every
 * listed key decrypts. A ciphertext is `v1.<key id>.<base64url iv>.<base64url ct+tag>`,
 * so keys rotate by prepending a new one; B11: a ciphertext under another key is
 * rewrapped under the first (on read, and by `sys/rotate/rewrap`) until none is left.
 */

import { fromBase64, fromUtf8, randomBytes, toBase64Url, utf8 } from "../bytes";
import { IsolateCache } from "../isolate-cache";

interface Keyring {
  primaryId: string;
  keys: Map<string, Promise<CryptoKey>>;
}

/** Keyrings by KEYWAY_KEK value: a deployment secret, so one entry in practice (B18). */
const keyrings = new IsolateCache<Keyring>({ name: "kek-keyrings", maxEntries: 4 });

/** One key of KEYWAY_KEK: its id and its 32 raw bytes. */
export interface KekEntry {
  id: string;
  raw: Uint8Array<ArrayBuffer>;
}

/** Why a KEYWAY_KEK value is refused (the message names key ids, never key material). */
export class KekFormatError extends Error {}

/**
 * Parse KEYWAY_KEK (B6): `base64` or `id:base64[,id:base64…]`, each key 32 bytes, ids of
 * letters, digits, `-` and `_`, each id once (B10: a duplicate id is a misconfiguration,
 * never "the first wins" or "the last wins"). A bare key gets the id `k0`.
 */
export function parseKek(secret: string): KekEntry[] {
  const entries: KekEntry[] = [];
  for (const entry of secret
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)) {
    const colon = entry.indexOf(":");
    const id = colon > 0 ? entry.slice(0, colon) : "k0";
    if (!/^[A-Za-z0-9_-]+$/.test(id)) throw new KekFormatError("key ids use letters, digits, - and _");
    if (entries.some((e) => e.id === id)) throw new KekFormatError(`duplicate key id "${id}"`);
    let raw: Uint8Array<ArrayBuffer>;
    try {
      raw = fromBase64(colon > 0 ? entry.slice(colon + 1) : entry);
    } catch {
      raw = new Uint8Array(0);
    }
    if (raw.length !== 32) throw new KekFormatError(`key "${id}" must be base64 of 32 bytes`);
    entries.push({ id, raw });
  }
  if (entries.length === 0) throw new KekFormatError("no key");
  return entries;
}

/** Parse KEYWAY_KEK into a keyring (cached per isolate). The first key encrypts. */
export function keyring(secret: string): Keyring {
  const cached = keyrings.peek(secret);
  if (cached) return cached;
  let entries: KekEntry[];
  try {
    entries = parseKek(secret);
  } catch (e) {
    throw new Error(`KEYWAY_KEK: ${(e as Error).message}`);
  }
  const keys = new Map<string, Promise<CryptoKey>>();
  for (const { id, raw } of entries)
    keys.set(id, crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt", "decrypt"]));
  const ring = { primaryId: entries[0]!.id, keys };
  keyrings.set(secret, ring);
  return ring;
}

/** The id of the key a ciphertext was written under, or null when it is not one of ours. */
export function ciphertextKeyId(ciphertext: string): string | null {
  const parts = ciphertext.split(".");
  return parts.length === 4 && parts[0] === "v1" ? parts[1]! : null;
}

/** True when `ciphertext` was written under another key than KEYWAY_KEK's primary (B11: rewrap it). */
export function needsRewrap(secret: string, ciphertext: string): boolean {
  const id = ciphertextKeyId(ciphertext);
  return id !== null && id !== keyring(secret).primaryId;
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
