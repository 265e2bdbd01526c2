/**
 * Issuers' signing keys, cached per isolate (decision S20; the CA-key cache sign relies on
 * for its speed). An entry is keyed by issuer id and remembers the exact ciphertext it was
 * imported from, so an RSA-4096 CA is decrypted and imported once, not on every sign, and
 * a replaced or deleted issuer is never signed with: the row sign reads (fresh, or at most
 * MOUNT_CONTEXT_TTL_MS old) must carry the same ciphertext for the entry to be used.
 */

import { rewrapStoredSecret } from "../../db/secrets-at-rest";
import { decryptSecret, needsRewrap } from "../../lib/crypto/kek";
import { importSigningKey, type SshSigningKey } from "../../lib/crypto/ssh-keys-and-certificates";
import { IsolateCache, MAX_CACHE_BYTES } from "../../lib/isolate-cache";
import { invalidateMountContexts } from "../context-cache";
import { type IssuerRow, issuerKekContext } from "./repo";

interface CacheEntry {
  ciphertext: string;
  key: Promise<SshSigningKey>;
}

/** Upper bound on cached keys per isolate; the oldest entry goes first. */
const MAX_KEYS = 256;

/** Issuer id → the key imported from that exact ciphertext (B18: ciphertexts vary in size). */
const cache = new IsolateCache<CacheEntry>({
  name: "ssh-signing-keys",
  maxEntries: MAX_KEYS,
  maxBytes: MAX_CACHE_BYTES,
});

function remember(id: string, entry: CacheEntry): void {
  cache.set(id, entry);
}

/** Seed the cache with a key just generated or imported for a new issuer. */
export function rememberSigningKey(row: IssuerRow, key: SshSigningKey): void {
  remember(row.id, { ciphertext: row.privateKeyEncrypted, key: Promise.resolve(key) });
}

/**
 * The signing key of an issuer row: cached when the row's ciphertext is the one cached,
 * else decrypted and imported once (concurrent callers share the import).
 */
export function signingKeyFor(
  env: Env,
  row: IssuerRow,
  waitUntil?: (work: Promise<unknown>) => void,
): Promise<SshSigningKey> {
  // B11: a CA key still under an older KEYWAY_KEK key is rewrapped under the primary one
  // after this request; the read itself uses the old ciphertext, which still decrypts.
  if (waitUntil && needsRewrap(env.KEYWAY_KEK, row.privateKeyEncrypted)) {
    waitUntil(
      rewrapStoredSecret(env, "ssh_issuers", row.id, row.privateKeyEncrypted, row.mount).then(() =>
        invalidateMountContexts(row.mount),
      ),
    );
  }
  const hit = cache.peek(row.id);
  if (hit && hit.ciphertext === row.privateKeyEncrypted) return hit.key;
  const key = decryptSecret(env.KEYWAY_KEK, issuerKekContext(row.mount), row.privateKeyEncrypted).then(
    importSigningKey,
  );
  const entry = { ciphertext: row.privateKeyEncrypted, key };
  remember(row.id, entry);
  // A failed import must not stay cached.
  key.catch(() => {
    if (cache.peek(row.id) === entry) cache.delete(row.id);
  });
  return key;
}
