/**
 * Issuer storage in D1 (decisions S20, S21): the CA key pairs of a mount (`ssh_issuers`)
 * and which one is the default (`ssh_issuer_config`). Lookups come in two forms: a query
 * builder (for callers that put it in a `db.batch` with other reads, as sign does) and an
 * async reader. Every write drops the mount's entries in the per-isolate caches at once
 * (context-cache.ts), so the isolate making a change sees it immediately and every other
 * isolate within MOUNT_CONTEXT_TTL_MS.
 *
 * The private key is encrypted under KEYWAY_KEK with the context `ssh-ca:<mount>` (B2),
 * the context the single CA of migration 0009's old shape used; it never leaves this
 * module's callers except as a WebCrypto signing key (see keys.ts).
 */
import { and, asc, eq, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { sshIssuerConfig, sshIssuers, sshRoles } from "../../db/schema/ssh";
import { encryptSecret } from "../../lib/crypto/kek";
import { parseCanonicalPublicKey } from "../../lib/sshwire/public-key";
import { invalidateMountContexts } from "../context-cache";

/** A stored issuer row. */
export type IssuerRow = typeof sshIssuers.$inferSelect;

/** The reference that always means "the mount's default issuer" (OpenBao). */
export const DEFAULT_ISSUER_REF = "default";

/** The issuers of a mount and its default: what every issuer decision reads. */
export interface MountIssuers {
  /** Oldest first (creation order, then id). */
  issuers: IssuerRow[];
  /** Id of the default issuer, or null when none is configured. */
  defaultId: string | null;
}

/** The AES-GCM additional data binding an issuer's private key ciphertext to its mount. */
export function issuerKekContext(mount: string): string {
  return `ssh-ca:${mount}`;
}

/** Select every issuer of a mount, oldest first (for a `db.batch`; decode with mountIssuersFromRows). */
export function issuersOfMountQuery(db: Db, mount: string) {
  return db
    .select()
    .from(sshIssuers)
    .where(eq(sshIssuers.mount, mount))
    .orderBy(asc(sshIssuers.createdAt), asc(sshIssuers.id));
}

/** Select a mount's issuer configuration row (for a `db.batch`). */
export function issuerConfigQuery(db: Db, mount: string) {
  return db
    .select({ defaultIssuerId: sshIssuerConfig.defaultIssuerId })
    .from(sshIssuerConfig)
    .where(eq(sshIssuerConfig.mount, mount))
    .limit(1);
}

/**
 * B17: a stored public key in its canonical text. Rows written before B17 may carry
 * surrounding whitespace or a different spacing; they read as the canonical form (and are
 * rewritten by rewriteNonCanonicalIssuerKeys). Text that does not parse at all is returned
 * as stored: no write path ever stored such a key, and its readers refuse it themselves.
 */
export function canonicalStoredKey(stored: string): string {
  try {
    return parseCanonicalPublicKey(stored).text;
  } catch {
    return stored;
  }
}

/** An issuer row as every reader sees it: its public key in canonical text (B17). */
function readIssuerRow(row: IssuerRow): IssuerRow {
  const publicKey = canonicalStoredKey(row.publicKey);
  return publicKey === row.publicKey ? row : { ...row, publicKey };
}

/** Decode the rows of issuersOfMountQuery and issuerConfigQuery. A default id naming no issuer reads as none. */
export function mountIssuersFromRows(
  issuerRows: IssuerRow[],
  configRows: { defaultIssuerId: string | null }[],
): MountIssuers {
  const id = configRows[0]?.defaultIssuerId ?? null;
  const defaultId = id !== null && issuerRows.some((i) => i.id === id) ? id : null;
  return { issuers: issuerRows.map(readIssuerRow), defaultId };
}

/**
 * B17's one-time rewrite: every issuer row of every mount whose public key is not in
 * canonical text is rewritten to it. Idempotent (a canonical row is left alone, and the
 * update only applies while the row still holds the text that was read).
 */
export async function rewriteNonCanonicalIssuerKeys(db: Db): Promise<number> {
  const rows = await db.select({ id: sshIssuers.id, publicKey: sshIssuers.publicKey }).from(sshIssuers);
  const stale = rows
    .map((row) => ({ ...row, canonical: canonicalStoredKey(row.publicKey) }))
    .filter((row) => row.canonical !== row.publicKey);
  for (const row of stale) {
    await db
      .update(sshIssuers)
      .set({ publicKey: row.canonical })
      .where(and(eq(sshIssuers.id, row.id), eq(sshIssuers.publicKey, row.publicKey)));
  }
  return stale.length;
}

/** The issuers of a mount and its default, in one D1 round trip. */
export async function issuersOfMount(db: Db, mount: string): Promise<MountIssuers> {
  const [issuerRows, configRows] = await db.batch([issuersOfMountQuery(db, mount), issuerConfigQuery(db, mount)]);
  return mountIssuersFromRows(issuerRows, configRows);
}

/** The default issuer, or null when none is configured. */
export function defaultIssuerOf(set: MountIssuers): IssuerRow | null {
  return set.defaultId === null ? null : (set.issuers.find((i) => i.id === set.defaultId) ?? null);
}

/**
 * Resolve an issuer reference (OpenBao: `default`, an issuer id, or a name) within a
 * mount's issuers. Null when nothing matches (and for `default` when no default is set).
 */
export function issuerByRef(set: MountIssuers, ref: string): IssuerRow | null {
  if (ref === DEFAULT_ISSUER_REF) return defaultIssuerOf(set);
  return set.issuers.find((i) => i.id === ref) ?? set.issuers.find((i) => i.name === ref) ?? null;
}

/** What a new issuer is made of; the private key is encrypted here. */
export interface NewIssuer {
  name: string | null;
  publicKeyText: string;
  privateKeyPem: string;
  keyType: string;
  trusted?: boolean;
}

/**
 * Store a new issuer (with a fresh UUID) and, when `makeDefault`, make it the mount's
 * default in the same batch. A name already taken fails the unique index; callers check
 * names first so that race is the only way to reach it.
 */
export async function insertIssuer(
  env: Env,
  db: Db,
  mount: string,
  issuer: NewIssuer,
  makeDefault: boolean,
): Promise<IssuerRow> {
  const now = Date.now();
  const row: IssuerRow = {
    id: crypto.randomUUID(),
    mount,
    name: issuer.name,
    // B17: the one canonical form, whatever the caller passed.
    publicKey: parseCanonicalPublicKey(issuer.publicKeyText).text,
    privateKeyEncrypted: await encryptSecret(env.KEYWAY_KEK, issuerKekContext(mount), issuer.privateKeyPem),
    keyType: issuer.keyType,
    trusted: issuer.trusted ?? true,
    createdAt: now,
    updatedAt: now,
  };
  const insert = db.insert(sshIssuers).values(row);
  if (makeDefault) await db.batch([insert, setDefaultStatement(db, mount, row.id)]);
  else await insert;
  invalidateMountContexts(mount);
  return row;
}

/** Change an issuer's name and/or trust (S20 update, S21 `trusted`). */
export async function updateIssuer(
  db: Db,
  mount: string,
  id: string,
  change: { name?: string | null; trusted?: boolean },
): Promise<void> {
  await db
    .update(sshIssuers)
    .set({ ...change, updatedAt: Date.now() })
    .where(and(eq(sshIssuers.mount, mount), eq(sshIssuers.id, id)));
  invalidateMountContexts(mount);
}

function setDefaultStatement(db: Db, mount: string, id: string | null) {
  return db
    .insert(sshIssuerConfig)
    .values({ mount, defaultIssuerId: id })
    .onConflictDoUpdate({ target: sshIssuerConfig.mount, set: { defaultIssuerId: id } });
}

/** Make an issuer the mount's default (null: no default). */
export async function setDefaultIssuer(db: Db, mount: string, id: string | null): Promise<void> {
  await setDefaultStatement(db, mount, id);
  invalidateMountContexts(mount);
}

/**
 * Delete one issuer of a mount. When it is the default the mount is left without a
 * default, in the same batch (OpenBao does the same and warns).
 */
export async function deleteIssuer(db: Db, mount: string, id: string): Promise<void> {
  await db.batch([
    db.delete(sshIssuers).where(and(eq(sshIssuers.mount, mount), eq(sshIssuers.id, id))),
    db
      .update(sshIssuerConfig)
      .set({ defaultIssuerId: null })
      .where(and(eq(sshIssuerConfig.mount, mount), eq(sshIssuerConfig.defaultIssuerId, id))),
  ]);
  invalidateMountContexts(mount);
}

/** Delete every issuer of a mount and its default (`DELETE config/ca`, S20). */
export async function deleteAllIssuers(db: Db, mount: string): Promise<void> {
  await db.batch([
    db.delete(sshIssuers).where(eq(sshIssuers.mount, mount)),
    db.delete(sshIssuerConfig).where(eq(sshIssuerConfig.mount, mount)),
  ]);
  invalidateMountContexts(mount);
}

/** How many CA roles of a mount name `ref` as their issuer (OpenBao's warning on rename and delete). */
export async function countRolesReferencingIssuer(db: Db, mount: string, ref: string): Promise<number> {
  const rows = await db
    .select({ n: sql<number>`count(*)` })
    .from(sshRoles)
    .where(
      and(
        eq(sshRoles.mount, mount),
        eq(sshRoles.keyType, "ca"),
        sql`coalesce(json_extract(${sshRoles.config}, '$.issuerRef'), 'default') = ${ref}`,
      ),
    );
  return rows[0]?.n ?? 0;
}
