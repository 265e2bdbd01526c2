/**
 * The issuers (S20) as revocation and the KRL see them: the one place this feature reads
 * the issuer model, through the issuers repo and service.
 */
import type { Db } from "../../db/client";
import {
  DEFAULT_ISSUER_REF,
  type IssuerRow,
  issuerConfigQuery,
  issuersOfMount,
  issuersOfMountQuery,
  type MountIssuers,
  mountIssuersFromRows,
} from "../issuers/repo";
import { resolveIssuer } from "../issuers/service";

export type { IssuerRow, MountIssuers };
export { DEFAULT_ISSUER_REF };

/** A mount's issuers (oldest first) and its default, in one D1 round trip. */
export function issuerSetOf(db: Db, mount: string): Promise<MountIssuers> {
  return issuersOfMount(db, mount);
}

/** The selects behind issuerSetOf, for a `db.batch`; decode with issuerSetFromRows. */
export function issuerSetQueries(db: Db, mount: string) {
  return [issuersOfMountQuery(db, mount), issuerConfigQuery(db, mount)] as const;
}

export const issuerSetFromRows = mountIssuersFromRows;

/**
 * Resolve `default`, an id or a name (S20); 400 `unable to find issuer for reference:
 * <ref>` otherwise (and OpenBao's `no default issuer currently configured` for `default`).
 */
export function resolveIssuerRef(set: MountIssuers, ref: string): IssuerRow {
  return resolveIssuer(set, ref);
}
