/**
 * `DELETE <mount>/tidy/dynamic-keys` (Vault's path_cleanup_dynamic_host_keys.go, decision S15):
 * removes the legacy dynamic host keys of a mount, which only data migrated from older
 * deployments can hold. It neither revokes leases nor touches remote hosts (the
 * contract, docs/api-secrets.md).
 */

import { envelope, object, str } from "../openapi/schemas";
import { vaultJson } from "../respond";
import type { VaultRequest, VaultRoute } from "../router";
import { deleteLegacyHostKeys } from "./repo";

async function tidyDynamicKeys(req: VaultRequest): Promise<Response> {
  const { present, removed } = await deleteLegacyHostKeys(req.db, req.mount);
  return vaultJson(req, { data: { message: `Removed ${removed} of ${present} host keys.` } });
}

export const legacyHostKeyRoutes: VaultRoute[] = [
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
