/**
 * The CA key pair of each mount (decision S9) in D1's `ssh_ca`. The private key is stored
 * only encrypted under KEYWAY_KEK with the context `ssh-ca:<mount>` (B2) and never leaves
 * this module except as a WebCrypto signing key.
 *
 * Imported signing keys are cached per isolate, keyed by mount and the stored ciphertext,
 * so an RSA-4096 CA is decrypted and imported once, not on every sign. A replaced or
 * deleted CA has a different (or no) ciphertext, so a stale entry is never used.
 */
import { eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { sshCa } from "../../db/schema";
import { rewrapStoredSecret } from "../../db/secrets-at-rest";
import { decryptSecret, encryptSecret, needsRewrap } from "../../lib/crypto/kek";
import { importSigningKey, type SshSigningKey } from "../../lib/crypto/ssh-ca";
import { invalidateMountContexts } from "../context-cache";

/** A stored CA row. */
export type CaRow = typeof sshCa.$inferSelect;

/** The AES-GCM additional data binding a ciphertext to its mount. */
function kekContext(mount: string): string {
  return `ssh-ca:${mount}`;
}

/** The select behind readCa, for use inside a `db.batch`. */
export function caQuery(db: Db, mount: string) {
  return db.select().from(sshCa).where(eq(sshCa.mount, mount)).limit(1);
}

/** The CA of a mount, or null before configuration. */
export async function readCa(db: Db, mount: string): Promise<CaRow | null> {
  const rows = await caQuery(db, mount);
  return rows[0] ?? null;
}

/**
 * Store (or replace, S9) a mount's CA. `publicKeyText` is kept verbatim (reference §3.9:
 * `public_key` serves exactly the submitted text). Pass the already-imported `signingKey` to
 * seed the cache.
 */
export async function writeCa(
  env: Env,
  db: Db,
  mount: string,
  ca: { publicKeyText: string; privateKeyPem: string; keyType: string; signingKey?: SshSigningKey },
): Promise<void> {
  const privateKeyEncrypted = await encryptSecret(env.KEYWAY_KEK, kekContext(mount), ca.privateKeyPem);
  const row = { publicKey: ca.publicKeyText, privateKeyEncrypted, keyType: ca.keyType, createdAt: Date.now() };
  await db
    .insert(sshCa)
    .values({ mount, ...row })
    .onConflictDoUpdate({ target: sshCa.mount, set: row });
  if (ca.signingKey) cache.set(mount, { ciphertext: privateKeyEncrypted, key: Promise.resolve(ca.signingKey) });
  else cache.delete(mount);
  invalidateMountContexts(mount);
}

/** Delete a mount's CA (204 even when none was configured). */
export async function deleteCa(db: Db, mount: string): Promise<void> {
  await db.delete(sshCa).where(eq(sshCa.mount, mount));
  cache.delete(mount);
  invalidateMountContexts(mount);
}

interface CacheEntry {
  ciphertext: string;
  key: Promise<SshSigningKey>;
}

/** Per-isolate cache: one entry per mount, the key imported from that exact ciphertext. */
const cache = new Map<string, CacheEntry>();

/**
 * The signing key of a stored CA row: from the cache when the row's ciphertext is the one
 * cached, else decrypted and imported once (concurrent callers share the import).
 */
export function signingKeyFor(env: Env, mount: string, row: CaRow, waitUntil: (work: Promise<unknown>) => void): Promise<SshSigningKey> {
  // B11: a CA key still under an older KEYWAY_KEK key is rewrapped under the primary one
  // after this request; the read itself uses the old ciphertext, which still decrypts.
  if (needsRewrap(env.KEYWAY_KEK, row.privateKeyEncrypted)) {
    waitUntil(rewrapStoredSecret(env, "ssh_ca", mount, row.privateKeyEncrypted).then(() => invalidateMountContexts(mount)));
  }
  const hit = cache.get(mount);
  if (hit && hit.ciphertext === row.privateKeyEncrypted) return hit.key;
  const key = decryptSecret(env.KEYWAY_KEK, kekContext(mount), row.privateKeyEncrypted).then(importSigningKey);
  const entry = { ciphertext: row.privateKeyEncrypted, key };
  cache.set(mount, entry);
  // A failed import must not stay cached.
  key.catch(() => {
    if (cache.get(mount) === entry) cache.delete(mount);
  });
  return key;
}
