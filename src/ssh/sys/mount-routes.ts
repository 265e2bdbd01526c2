/**
 * Mount lease TTLs (decision S1): `GET|POST sys/mounts/:mount/tune`, 768h by default,
 * read back as integer seconds. A re-tune never changes leases already granted: callers
 * read the TTL once when they grant a lease.
 */
import { trimTrailing } from "../../lib/bytes";
import { invalidateMountContexts } from "../context-cache";
import { badRequest } from "../errors";
import { parseFields, unknownFieldWarnings } from "../fields";
import { type MountTtls, mountTtls, SYSTEM_LEASE_TTL_SECONDS, saveMountTtls } from "../mount-ttls";
import { bool, envelope, int, object, str, written } from "../openapi/schemas";
import { vaultJson, vaultNoContent } from "../respond";
import type { VaultRequest, VaultRoute } from "../router";
import { configuredMounts } from "../router";

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
          defaultLeaseTtl:
            f.provided.has("default_lease_ttl") && (f.values.default_lease_ttl as number) > 0
              ? (f.values.default_lease_ttl as number)
              : current.defaultLeaseTtl,
          maxLeaseTtl:
            f.provided.has("max_lease_ttl") && (f.values.max_lease_ttl as number) > 0
              ? (f.values.max_lease_ttl as number)
              : current.maxLeaseTtl,
        };
        if (next.maxLeaseTtl > SYSTEM_LEASE_TTL_SECONDS) {
          throw badRequest("the value for max_lease_ttl is greater than the system max");
        }
        if (next.defaultLeaseTtl > next.maxLeaseTtl) {
          throw badRequest("the value for default_lease_ttl is greater than max_lease_ttl");
        }
        await saveMountTtls(req.db, mount, next);
        // Sign, issue and creds cache the mount's TTLs per isolate; this isolate sees the tune at once.
        invalidateMountContexts(mount);
        return vaultNoContent(req, unknownFieldWarnings(f.unknown));
      },
    },
  },
];
