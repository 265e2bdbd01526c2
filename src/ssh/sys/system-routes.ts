/**
 * Other `sys/*` endpoints: `sys/leases/revoke` (S13, S18) and `sys/capabilities-self`
 * (`sys/auth` is ./auth-mount-routes.ts).
 */
import { aclFor } from "../access/acl";
import { badRequest, permissionDenied } from "../errors";
import { parseFields } from "../fields";
import { envelope, strings, written } from "../openapi/schemas";
import { revokeOtpLease } from "../otp/leases";
import { vaultJson, vaultNoContent } from "../respond";
import { configuredMounts, NAME_PATTERN, type VaultRoute } from "../router";

const LEASE_REVOKE_FIELDS = { lease_id: { type: "string" }, sync: { type: "bool" } } as const;
const CAPABILITIES_FIELDS = { paths: { type: "commaList" }, path: { type: "commaList" } } as const;

export const systemRoutes: VaultRoute[] = [
  {
    pattern: "sys/leases/revoke",
    docs: {
      operations: {
        update: {
          summary: "Revoke a lease (an OTP's; sign and issue leases record nothing)",
          body: LEASE_REVOKE_FIELDS,
          responses: written("revoked"),
        },
      },
    },
    operations: {
      update: async (req) => {
        const f = parseFields(req.body, LEASE_REVOKE_FIELDS);
        const leaseId = String(f.values.lease_id).trim();
        if (!leaseId) throw badRequest("lease_id is required");
        // lint-regex: NAME_PATTERN is a constant character class; every part is delimited by `/`, anchored.
        const m = new RegExp(`^([a-z0-9][a-z0-9_-]*)/(creds|sign|issue)/(${NAME_PATTERN})/([A-Za-z0-9-]+)$`).exec(
          leaseId,
        );
        if (!m || !configuredMounts(req.env.SSH_MOUNTS).includes(m[1]!)) throw badRequest("invalid lease ID");
        // S18: sign and issue leases record nothing; revoking them is a no-op. S13: an OTP
        // lease deletes its OTP. Revocation is idempotent (204 either way).
        if (m[2] === "creds") await revokeOtpLease(req.env, m[1]!, m[3]!, m[4]!);
        return vaultNoContent(req);
      },
    },
  },
  {
    pattern: "sys/capabilities-self",
    docs: {
      operations: {
        update: {
          summary: "The calling token's capabilities on paths",
          body: CAPABILITIES_FIELDS,
          responses: envelope("capabilities per path (and `capabilities` when one path was asked)", {
            type: "object",
            additionalProperties: strings(),
          }),
        },
      },
    },
    operations: {
      update: async (req) => {
        if (!req.token) throw permissionDenied();
        const f = parseFields(req.body, CAPABILITIES_FIELDS);
        const paths = [...(f.values.paths as string[]), ...(f.values.path as string[])];
        if (paths.length === 0) throw badRequest("'paths' must be specified");
        const acl = await aclFor(req.db, req.token);
        const data: Record<string, string[]> = {};
        for (const path of paths) {
          const caps = acl ? [...acl.capabilities(path.replace(/^\/+/, ""))].sort() : ["root"];
          data[path] = caps.length > 0 ? caps : ["deny"];
        }
        if (paths.length === 1) data.capabilities = data[paths[0]!]!;
        return vaultJson(req, { data });
      },
    },
  },
];
