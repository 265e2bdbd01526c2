/**
 * `POST /v1/sys/rotate/rewrap` (decision B11): re-encrypt the secrets stored under an
 * older KEYWAY_KEK key under the primary (first) one, REWRAP_BATCH at a time. The answer
 * says how many this call rewrapped and how many are still under another key; call again
 * until `remaining` is 0, and only then remove the old key from KEYWAY_KEK (README).
 * Root, or `update` plus `sudo` on the path (Vault's rule for `sys/rotate`).
 */
import { REWRAP_BATCH, rewrapSecrets } from "../../db/secrets-at-rest";
import { aclFor } from "../access/acl";
import { permissionDenied } from "../errors";
import { parseFields, unknownFieldWarnings } from "../fields";
import { envelope, int, object } from "../openapi/schemas";
import { vaultJson } from "../respond";
import type { VaultRoute } from "../router";

/** The call takes no fields (any sent are ignored with a warning). */
const REWRAP_FIELDS = {} as const;

export const rotateRoutes: VaultRoute[] = [
  {
    pattern: "sys/rotate/rewrap",
    docs: {
      operations: {
        update: {
          summary: "Re-encrypt stored secrets under the primary KEYWAY_KEK key (root or sudo)",
          body: REWRAP_FIELDS,
          responses: envelope(
            "how many this call rewrapped and how many remain",
            object({ rewrapped: int(), remaining: int("secrets still under another key; call again until 0") }),
          ),
        },
      },
    },
    operations: {
      update: async (req) => {
        if (!req.token) throw permissionDenied();
        const acl = await aclFor(req.db, req.token);
        if (acl && !acl.capabilities(req.path).has("sudo")) throw permissionDenied();
        const f = parseFields(req.body, REWRAP_FIELDS);
        const result = await rewrapSecrets(req.env, REWRAP_BATCH);
        const warnings = unknownFieldWarnings(f.unknown);
        if (result.unknownKey > 0) {
          warnings.push(
            `${result.unknownKey} stored secret(s) are encrypted under a key id KEYWAY_KEK no longer lists; add that key back (after the primary) to rewrap them`,
          );
        }
        return vaultJson(req, { data: { rewrapped: result.rewrapped, remaining: result.remaining }, warnings });
      },
    },
  },
];
