/**
 * A mount's lease TTLs (decision S1), as set by `sys/mounts/:mount/tune` (sys/mount-routes.ts):
 * 768h by default. OTP credentials and signed certificates read them when they grant a
 * lease, so a re-tune never changes leases already granted.
 */
import { eq } from "drizzle-orm";
import type { Db } from "../db/client";
import { sshMountTune } from "../db/schema/ssh";

/** Vault's system default and maximum lease TTL: 768h. */
export const SYSTEM_LEASE_TTL_SECONDS = 768 * 3600;

export interface MountTtls {
  defaultLeaseTtl: number;
  maxLeaseTtl: number;
}

/** The tuned TTLs of a mount (system defaults when never tuned). */
export async function mountTtls(db: Db, mount: string): Promise<MountTtls> {
  return mountTtlsFromRows(await mountTuneQuery(db, mount));
}

/** Stores a mount's tuned TTLs (sys/mount-routes.ts validated them). */
export async function saveMountTtls(db: Db, mount: string, ttls: MountTtls): Promise<void> {
  await db
    .insert(sshMountTune)
    .values({ mount, ...ttls })
    .onConflictDoUpdate({ target: sshMountTune.mount, set: ttls });
}

/** The select behind mountTtls, for callers that batch it with other reads. */
export function mountTuneQuery(db: Db, mount: string) {
  return db
    .select({ defaultLeaseTtl: sshMountTune.defaultLeaseTtl, maxLeaseTtl: sshMountTune.maxLeaseTtl })
    .from(sshMountTune)
    .where(eq(sshMountTune.mount, mount))
    .limit(1);
}

/** Decode mountTuneQuery's rows (system defaults when the mount was never tuned). */
export function mountTtlsFromRows(rows: MountTtls[]): MountTtls {
  const row = rows[0];
  return row
    ? { defaultLeaseTtl: row.defaultLeaseTtl, maxLeaseTtl: row.maxLeaseTtl }
    : { defaultLeaseTtl: SYSTEM_LEASE_TTL_SECONDS, maxLeaseTtl: SYSTEM_LEASE_TTL_SECONDS };
}
