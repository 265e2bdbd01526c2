/**
 * The legacy dynamic host keys of a mount (decision S15), which only data migrated from
 * older deployments can hold: the one query `tidy/dynamic-keys` runs.
 */
import { count, eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { sshLegacyHostKeys } from "../../db/schema/ssh";

/** Deletes every legacy host key of `mount`; how many there were and how many went. */
export async function deleteLegacyHostKeys(db: Db, mount: string): Promise<{ present: number; removed: number }> {
  const where = eq(sshLegacyHostKeys.mount, mount);
  // One batch, so the count and the deletion see the same rows.
  const [present, removed] = await db.batch([
    db.select({ n: count() }).from(sshLegacyHostKeys).where(where),
    db.delete(sshLegacyHostKeys).where(where).returning({ name: sshLegacyHostKeys.name }),
  ]);
  return { present: present[0]?.n ?? 0, removed: removed.length };
}
