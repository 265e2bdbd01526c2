/**
 * `DELETE <mount>/tidy/dynamic-keys` (Vault's path_cleanup_dynamic_host_keys.go, decision S15):
 * removes the legacy dynamic host keys of a mount, which only data migrated from older
 * deployments can hold. It neither revokes leases nor touches remote hosts (the
 * contract, docs/api-secrets.md).
 */
import { count, eq } from "drizzle-orm";
import { sshLegacyHostKeys } from "../db/schema";
import { envelope, object, str } from "./openapi-schemas";
import { vaultJson } from "./respond";
import type { VaultRequest, VaultRoute } from "./router";

async function tidyDynamicKeys(req: VaultRequest): Promise<Response> {
  const where = eq(sshLegacyHostKeys.mount, req.mount);
  // One batch, so the count and the deletion see the same rows.
  const [present, removed] = await req.db.batch([
    req.db.select({ n: count() }).from(sshLegacyHostKeys).where(where),
    req.db.delete(sshLegacyHostKeys).where(where).returning({ name: sshLegacyHostKeys.name }),
  ]);
  const total = present[0]?.n ?? 0;
  return vaultJson(req, { data: { message: `Removed ${removed.length} of ${total} host keys.` } });
}

export const tidyRoutes: VaultRoute[] = [
  {
    pattern: "tidy/dynamic-keys",
    mounted: true,
    operations: { delete: tidyDynamicKeys },
    docs: {
      operations: {
        delete: {
          summary: "Remove legacy dynamic host keys",
          responses: envelope("how many were removed", object({ message: str() })),
        },
      },
    },
  },
];
