/**
 * Mount lease TTLs (decision S1): `GET|POST sys/mounts/:mount/tune`, 768h by default,
 * read back as integer seconds. A re-tune never changes leases already granted: callers
 * read the TTL once when they grant a lease.
 */
import { eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { sshMountTune } from "../../db/schema";
import { trimTrailing } from "../../lib/bytes";
import { badRequest } from "../errors";
import { parseFields, unknownFieldWarnings } from "../fields";
import { bool, envelope, int, object, str, written } from "../openapi/describe";
import { vaultJson, vaultNoContent } from "../respond";
import type { VaultRequest, VaultRoute } from "../router";
import { configuredMounts } from "../router";
import { invalidateMountContexts } from "../context-cache";

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

function mountOf(req: VaultRequest): string {
  const mount = trimTrailing(req.params.mount ?? "", "/");
  if (!configuredMounts(req.env.SSH_MOUNTS).includes(mount)) {
    throw badRequest(`cannot fetch sysview for path "${mount}/"`);
  }
  return mount;
}

const TUNE_FIELDS = {
  default_lease_ttl: { type: "duration" },
  max_lease_ttl: { type: "duration" },
  description: { type: "string" },
} as const;

export const mountRoutes: VaultRoute[] = [
  {
    pattern: "sys/mounts/:mount/tune",
    params: { mount: "[a-z0-9][a-z0-9_-]*" },
    docs: {
      params: { mount: "an SSH mount" },
      operations: {
        read: {
          summary: "Read a mount's lease TTLs",
          responses: envelope(
            "the TTLs in seconds",
            object({ default_lease_ttl: int(), max_lease_ttl: int(), force_no_cache: bool(), description: str() }),
          ),
        },
        update: { summary: "Tune a mount's lease TTLs", body: TUNE_FIELDS, responses: written("tuned") },
      },
    },
    operations: {
      read: async (req) => {
        const ttls = await mountTtls(req.db, mountOf(req));
        return vaultJson(req, {
          data: {
            default_lease_ttl: ttls.defaultLeaseTtl,
            max_lease_ttl: ttls.maxLeaseTtl,
            force_no_cache: false,
            description: "",
          },
        });
      },
      update: async (req) => {
        const mount = mountOf(req);
        const f = parseFields(req.body, TUNE_FIELDS);
        const current = await mountTtls(req.db, mount);
        // An absent or zero value leaves that setting as it is.
        const next: MountTtls = {
          defaultLeaseTtl: f.provided.has("default_lease_ttl") && (f.values.default_lease_ttl as number) > 0
            ? (f.values.default_lease_ttl as number)
            : current.defaultLeaseTtl,
          maxLeaseTtl: f.provided.has("max_lease_ttl") && (f.values.max_lease_ttl as number) > 0
            ? (f.values.max_lease_ttl as number)
            : current.maxLeaseTtl,
        };
        if (next.maxLeaseTtl > SYSTEM_LEASE_TTL_SECONDS) {
          throw badRequest("the value for max_lease_ttl is greater than the system max");
        }
        if (next.defaultLeaseTtl > next.maxLeaseTtl) {
          throw badRequest("the value for default_lease_ttl is greater than max_lease_ttl");
        }
        await req.db
          .insert(sshMountTune)
          .values({ mount, ...next })
          .onConflictDoUpdate({ target: sshMountTune.mount, set: next });
        // Sign, issue and creds cache the mount's TTLs per isolate; this isolate sees the tune at once.
        invalidateMountContexts(mount);
        return vaultNoContent(req, unknownFieldWarnings(f.unknown));
      },
    },
  },
];
