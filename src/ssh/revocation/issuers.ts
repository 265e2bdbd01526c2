/**
 * The issuers (CA keys) revocation and the KRL work with (S20, S23): their ids, names and
 * public keys. The one place this feature reads issuers, so the issuer model is an
 * implementation detail here.
 *
 * Until the issuers of S20 land, a mount has at most its one CA (`ssh_ca`), seen as an
 * issuer with the id `ca:<mount>` that is also the default.
 */
import { eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { sshCa } from "../../db/schema";
import { badRequest } from "../errors";

/** What revocation needs of an issuer. */
export interface RevocationIssuer {
  id: string;
  name: string | null;
  /** The public key as stored (`type base64 [comment]`). */
  publicKey: string;
}

/** A mount's issuers, oldest first, and its default. */
export interface IssuerSet {
  issuers: RevocationIssuer[];
  defaultId: string | null;
}

/** The reference that always means the mount's default issuer (OpenBao). */
export const DEFAULT_ISSUER_REF = "default";

/** The issuer id of a mount's single CA. */
export function caIssuerId(mount: string): string {
  return `ca:${mount}`;
}

/** The select behind issuerSetOf, for a `db.batch`; decode with issuerSetFromRows. */
export function issuerSetQuery(db: Db, mount: string) {
  return db.select({ mount: sshCa.mount, publicKey: sshCa.publicKey }).from(sshCa).where(eq(sshCa.mount, mount));
}

export function issuerSetFromRows(rows: { mount: string; publicKey: string }[]): IssuerSet {
  const issuers = rows.map((r) => ({ id: caIssuerId(r.mount), name: null, publicKey: r.publicKey }));
  return { issuers, defaultId: issuers[0]?.id ?? null };
}

/** A mount's issuers in one D1 round trip. */
export async function issuerSetOf(db: Db, mount: string): Promise<IssuerSet> {
  return issuerSetFromRows(await issuerSetQuery(db, mount));
}

/** S20's answer for a reference that names no issuer. */
export const unknownIssuer = (ref: string) => badRequest(`unable to find issuer for reference: ${ref}`);

/** Resolve `default`, an id or a name; 400 `unable to find issuer for reference` otherwise. */
export function resolveIssuerRef(set: IssuerSet, ref: string): RevocationIssuer {
  const issuer =
    ref === DEFAULT_ISSUER_REF
      ? set.issuers.find((i) => i.id === set.defaultId)
      : (set.issuers.find((i) => i.id === ref) ?? set.issuers.find((i) => i.name === ref));
  if (!issuer) throw unknownIssuer(ref);
  return issuer;
}
