/**
 * `sys/auth` (decisions S5a, S24): the table of auth methods, the token store's and the
 * JWT/OIDC mounts', and enabling and disabling JWT/OIDC mounts at `auth/<path>`. Enabling,
 * reading and disabling one mount needs `sudo` on `sys/auth/<path>` (root has it).
 */

import { randomBytes, toHex } from "../../lib/bytes";
import { tokenStoreAccessor } from "../access/token-repo";
import { badRequest, notFound } from "../errors";
import { parseFields, unknownFieldWarnings } from "../fields";
import type { AuthMount } from "../jwt-auth/model";
import { deleteAuthMount, findAuthMount, insertAuthMount, listAuthMounts } from "../jwt-auth/repo";
import { bool, COMPONENT, envelope, int, keyedBy, object, str, written } from "../openapi/schemas";
import { jsonResponse, vaultEnvelope, vaultJson, vaultNoContent } from "../respond";
import type { VaultRoute } from "../router";

/** S24: the grammar of an auth mount path, at most MAX_PATH characters. */
const PATH_GRAMMAR = /^[a-z0-9][a-z0-9_-]*(\/[a-z0-9][a-z0-9_-]*)*$/;
const MAX_PATH = 64;

const ENABLE_FIELDS = {
  type: { type: "string" },
  description: { type: "string" },
  config: { type: "raw" },
  local: { type: "bool" },
  seal_wrap: { type: "bool" },
  options: { type: "raw" },
  // Sent by `vault auth enable`; accepted and ignored (Keyway has no plugins or entropy source).
  external_entropy_access: { type: "bool" },
  plugin_name: { type: "string" },
  plugin_version: { type: "string" },
} as const;

/** B14: one entry of the `sys/auth` table. */
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

/** Vault's entry of one auth method in `sys/auth`. */
function mountEntry(accessor: string, type: string, description: string) {
  return {
    accessor,
    config: { default_lease_ttl: 0, max_lease_ttl: 0, force_no_cache: false, token_type: "default-service" },
    description,
    external_entropy_access: false,
    local: false,
    options: null,
    seal_wrap: false,
    type,
    uuid: accessor,
  };
}

/** S24: the 400 for a path that is `token`, or lies under or above an enabled mount; null when free. */
function conflict(path: string, mounts: AuthMount[]): string | null {
  for (const existing of ["token", ...mounts.map((m) => m.path)]) {
    if (path === existing || path.startsWith(`${existing}/`) || existing.startsWith(`${path}/`)) {
      return `path is already in use at ${existing}/`;
    }
  }
  return null;
}

const PATH_PARAM = { path: "[^?#]+" };

export const authMountRoutes: VaultRoute[] = [
  {
    pattern: "sys/auth",
    docs: {
      operations: {
        read: {
          summary: "List auth methods: the token store and every JWT/OIDC mount",
          responses: {
            "200": {
              description: "Vault's table of auth mounts (keys end in `/`), at the top level and under `data`",
              content: {
                "application/json": {
                  schema: {
                    allOf: [
                      { $ref: COMPONENT.envelope },
                      {
                        type: "object",
                        properties: {
                          data: keyedBy(authMountSchema, "one entry per mount path, with a trailing `/`"),
                          auth: { type: "null" },
                        },
                        patternProperties: { "/$": authMountSchema },
                        required: ["token/"],
                      },
                    ],
                    unevaluatedProperties: false,
                  },
                },
              },
            },
          },
        },
      },
    },
    operations: {
      read: async (req) => {
        const [accessor, mounts] = await Promise.all([tokenStoreAccessor(req.db), listAuthMounts(req.db)]);
        const table: Record<string, ReturnType<typeof mountEntry>> = {
          "token/": mountEntry(accessor, "token", "token based credentials"),
        };
        for (const m of mounts) table[`${m.path}/`] = mountEntry(m.accessor, m.type, m.description);
        // Vault returns the table both at the top level and under `data`.
        return jsonResponse({ ...table, ...vaultEnvelope(req, { data: table }) }, 200);
      },
    },
  },
  {
    pattern: "sys/auth/:path",
    params: PATH_PARAM,
    sudo: true,
    docs: {
      params: { path: "the mount's path below `auth/`, e.g. `jwt` or `ci/github`" },
      operations: {
        read: {
          summary: "Read one auth method",
          responses: envelope("the mount", authMountSchema),
        },
        update: {
          summary: "Enable a JWT/OIDC auth method at auth/<path>",
          body: ENABLE_FIELDS,
          responses: written("enabled"),
        },
        delete: {
          summary:
            "Disable an auth method: its config, roles, entity and group aliases go, tokens it made are revoked with their children",
          responses: written("disabled (also when nothing was enabled there)"),
        },
      },
    },
    operations: {
      read: async (req) => {
        const path = req.params.path ?? "";
        if (path === "token") {
          const accessor = await tokenStoreAccessor(req.db);
          return vaultJson(req, { data: mountEntry(accessor, "token", "token based credentials") });
        }
        const mount = await findAuthMount(req.db, path);
        if (!mount) throw notFound();
        return vaultJson(req, { data: mountEntry(mount.accessor, mount.type, mount.description) });
      },
      update: async (req) => {
        const path = req.params.path ?? "";
        const f = parseFields(req.body, ENABLE_FIELDS);
        if (path.length > MAX_PATH || !PATH_GRAMMAR.test(path)) {
          throw badRequest(
            `invalid path "${path}": lower-case segments of a-z, 0-9, '_' and '-' (starting with a letter or digit) joined by '/', at most ${MAX_PATH} characters`,
          );
        }
        // Routes under a mount end in `role/:name`, so `auth/a/role/login` must mean the role
        // `login` of mount `a`, never the login of a mount `a/role`.
        if (path.endsWith("/role")) {
          throw badRequest(
            `invalid path "${path}": a nested path cannot end in "/role" (auth/${path}/login would name a role)`,
          );
        }
        const type = String(f.values.type);
        if (type !== "jwt" && type !== "oidc") throw badRequest(`unsupported auth method type: ${type}`);
        const taken = conflict(path, await listAuthMounts(req.db));
        if (taken) throw badRequest(taken);
        const mount: AuthMount = {
          path,
          type,
          accessor: `auth_${type}_${toHex(randomBytes(4))}`,
          description: String(f.values.description),
          createdAt: Date.now(),
        };
        if (!(await insertAuthMount(req.db, mount))) {
          // Another request enabled an overlapping path meanwhile.
          throw badRequest(conflict(path, await listAuthMounts(req.db)) ?? `path is already in use at ${path}/`);
        }
        return vaultNoContent(req, unknownFieldWarnings(f.unknown));
      },
      delete: async (req) => {
        const path = req.params.path ?? "";
        if (path === "token") throw badRequest('cannot disable the token store at "token/"');
        const mount = await findAuthMount(req.db, path);
        if (mount) await deleteAuthMount(req.db, mount);
        return vaultNoContent(req);
      },
    },
  },
];
