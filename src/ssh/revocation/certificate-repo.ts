/** The queries of the opt-in certificate inventory (decision S22). */
import { and, asc, count, eq, gt, lt, type SQL, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { sshCertificates } from "../../db/schema/ssh";

export type CertificateRow = typeof sshCertificates.$inferSelect;

/** Inserts a certificate's row; false when its issuer already has one with this serial. */
export async function insertCertificate(db: Db, row: typeof sshCertificates.$inferInsert): Promise<boolean> {
  const inserted = await db
    .insert(sshCertificates)
    .values(row)
    .onConflictDoNothing()
    .returning({ serial: sshCertificates.serial });
  return inserted.length === 1;
}

/** The filters of `certs?list=true`; `after` is a stored serial text or what the client sent. */
export interface CertificateFilter {
  mount: string;
  after: string | null;
  role: string | null;
  keyId: string | null;
  principal: string | null;
  limit: number;
}

/** One page of a mount's certificates, by serial then issuer. */
export function listCertificateRows(db: Db, filter: CertificateFilter): Promise<CertificateRow[]> {
  const conditions: SQL[] = [eq(sshCertificates.mount, filter.mount)];
  if (filter.after) conditions.push(gt(sshCertificates.serial, filter.after));
  if (filter.role) conditions.push(eq(sshCertificates.role, filter.role));
  if (filter.keyId) conditions.push(eq(sshCertificates.keyId, filter.keyId));
  if (filter.principal)
    conditions.push(
      sql`exists (select 1 from json_each(${sshCertificates.principals}) where json_each.value = ${filter.principal})`,
    );
  return db
    .select()
    .from(sshCertificates)
    .where(and(...conditions))
    .orderBy(asc(sshCertificates.serial), asc(sshCertificates.issuerId))
    .limit(filter.limit);
}

/** Up to two certificates of a mount with this serial (of one issuer when `issuerId` is given). */
export function certificateRowsBySerial(
  db: Db,
  mount: string,
  serial: string,
  issuerId: string | null,
): Promise<CertificateRow[]> {
  const conditions = [eq(sshCertificates.mount, mount), eq(sshCertificates.serial, serial)];
  if (issuerId !== null) conditions.push(eq(sshCertificates.issuerId, issuerId));
  return db
    .select()
    .from(sshCertificates)
    .where(and(...conditions))
    .limit(2);
}

/** The valid-before of the certificate an issuer signed with this serial; null when not recorded. */
export async function certificateValidBefore(db: Db, issuerId: string, serial: string): Promise<number | null> {
  const cert = await db
    .select({ validBefore: sshCertificates.validBefore })
    .from(sshCertificates)
    .where(and(eq(sshCertificates.issuerId, issuerId), eq(sshCertificates.serial, serial)))
    .limit(1);
  return cert[0]?.validBefore ?? null;
}

/** Deletes a mount's certificates that expired before `cutoff` (seconds); how many there were and went. */
export async function deleteExpiredCertificates(
  db: Db,
  mount: string,
  cutoff: number,
): Promise<{ total: number; removed: number }> {
  const where = and(eq(sshCertificates.mount, mount), lt(sshCertificates.validBefore, cutoff));
  const [[total], removed] = await db.batch([
    db.select({ n: count() }).from(sshCertificates).where(eq(sshCertificates.mount, mount)),
    db.delete(sshCertificates).where(where).returning({ serial: sshCertificates.serial }),
  ]);
  return { total: total?.n ?? 0, removed: removed.length };
}
