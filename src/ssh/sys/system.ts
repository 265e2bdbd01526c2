/**
 * Other `sys/*` endpoints: `sys/auth` (the token store's accessor, S5a),
 * `sys/leases/revoke` (S13, S18) and `sys/capabilities-self`.
 */
import { aclFor } from "../auth/acl";
import { tokenStoreAccessor } from "../auth/token-queries";
import { badRequest, permissionDenied } from "../errors";
import { parseFields } from "../fields";
import { bool, envelope, envelopeWith, int, object, str, strings, written } from "../openapi-schemas";
import { revokeOtpLease } from "../otp/leases";
import { jsonResponse, vaultEnvelope, vaultJson, vaultNoContent } from "../respond";
import { configuredMounts, NAME_PATTERN, type VaultRoute } from "../router";

const LEASE_REVOKE_FIELDS = { lease_id: { type: "string" }, sync: { type: "bool" } } as const;
const CAPABILITIES_FIELDS = { paths: { type: "commaList" }, path: { type: "commaList" } } as const;

/** B14: the token store's entry of `sys/auth`. */
const authMountSchema = object({
  accessor: str(),
  config: object({ default_lease_ttl: int(), max_lease_ttl: int(), force_no_cache: bool(), token_type: str() }),
  description: str(),
  external_entropy_access: bool(),
  local: bool(),
  options: { type: "null" },
  seal_wrap: bool(),
  type: str(),
  uuid: str(),
});

export const systemRoutes: VaultRoute[] = [
  {
    pattern: "sys/auth",
    docs: {
      operations: {
        read: {
          summary: "List auth methods (the token store)",
          responses: {
            "200": {
              description: "Vault's table of auth mounts, at the top level and under `data`",
              content: {
                "application/json": {
                  schema: envelopeWith(
                    { "token/": authMountSchema, data: object({ "token/": authMountSchema }), auth: { type: "null" } },
                    { required: ["token/"] },
                  ),
                },
              },
            },
          },
        },
      },
    },
    operations: {
      read: async (req) => {
        const accessor = await tokenStoreAccessor(req.db);
        const mounts = {
          "token/": {
            accessor,
            config: { default_lease_ttl: 0, max_lease_ttl: 0, force_no_cache: false, token_type: "default-service" },
            description: "token based credentials",
            external_entropy_access: false,
            local: false,
            options: null,
            seal_wrap: false,
            type: "token",
            uuid: accessor,
          },
        };
        // Vault returns the table both at the top level and under `data`.
        return jsonResponse({ ...mounts, ...vaultEnvelope(req, { data: mounts }) }, 200);
      },
    },
  },
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
