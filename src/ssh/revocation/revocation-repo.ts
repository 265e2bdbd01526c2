/**
 * The queries of revocations (decision S23). A revocation's write and the KRL's version
 * change (krl.ts) go in one batch, so a committed change always reaches the next KRL.
 */
import { and, asc, eq, lte } from "drizzle-orm";
import type { Db } from "../../db/client";
import { sshRevocations } from "../../db/schema/ssh";
import { krlChangeIfDeletedStatement, krlChangeStatement } from "./krl";

export type RevocationRow = typeof sshRevocations.$inferSelect;

/** Inserts a revocation and grows the mount's KRL version, in one batch. */
export async function insertRevocation(db: Db, row: RevocationRow, nowMs: number): Promise<void> {
  await db.batch([db.insert(sshRevocations).values(row), krlChangeStatement(db, row.mount, nowMs)]);
}

/** A mount's revocations, oldest first. */
export function listRevocationRows(db: Db, mount: string): Promise<RevocationRow[]> {
  return db
    .select()
    .from(sshRevocations)
    .where(eq(sshRevocations.mount, mount))
    .orderBy(asc(sshRevocations.createdAt), asc(sshRevocations.id));
}

/** One revocation of a mount; null when absent. */
export async function findRevocationRow(db: Db, mount: string, id: string): Promise<RevocationRow | null> {
  const rows = await db
    .select()
    .from(sshRevocations)
    .where(and(eq(sshRevocations.mount, mount), eq(sshRevocations.id, id)))
    .limit(1);
  return rows[0] ?? null;
}

/**
 * Deletes one revocation, and grows the KRL version when it went, in one batch (one
 * transaction); the kind of the deleted revocation, or null when it was already gone.
 */
export async function deleteRevocationRow(db: Db, mount: string, id: string, nowMs: number): Promise<string | null> {
  const [removed] = await db.batch([
    db
      .delete(sshRevocations)
      .where(and(eq(sshRevocations.mount, mount), eq(sshRevocations.id, id)))
      .returning({ kind: sshRevocations.kind }),
    krlChangeIfDeletedStatement(db, mount, nowMs),
  ]);
  return removed[0]?.kind ?? null;
}

/** Deletes a mount's revocations past their `expires_at`, growing the KRL version when any went; how many. */
export async function deleteExpiredRevocations(db: Db, mount: string, nowMs: number): Promise<number> {
  const [removed] = await db.batch([
    db
      .delete(sshRevocations)
      .where(and(eq(sshRevocations.mount, mount), lte(sshRevocations.expiresAt, Math.floor(nowMs / 1000))))
      .returning({ id: sshRevocations.id }),
    krlChangeIfDeletedStatement(db, mount, nowMs),
  ]);
  return removed.length;
}
