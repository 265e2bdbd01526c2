/**
 * Routes of the JWT/OIDC auth method under `auth/<mount>/` (decisions S24, S25). The
 * mount parameter may hold `/` (S24's path grammar); role routes come before `login` in
 * the table, so `auth/<m>/role/login` is the role named `login`.
 */
import {
  authEnvelope,
  bool,
  envelope,
  int,
  listData,
  nullable,
  object,
  str,
  strings,
  written,
} from "../openapi/schemas";
import type { VaultRoute } from "../router";
import { CONFIG_FIELDS, readConfig, writeConfig } from "./config";
import { LOGIN_FIELDS, loginHandler } from "./login";
import { AUTH_MOUNT_PATTERN } from "./mount";
import { deleteRole, listRoles, ROLE_FIELDS, readRole, roleNameNormaliser, writeRole } from "./roles";

const MOUNT_DOC = "the auth mount's path (below `auth/`), as enabled through `sys/auth`";

const configSchema = object({
  oidc_discovery_url: str(),
  oidc_discovery_ca_pem: str(),
  oidc_client_id: str(),
  oidc_response_mode: str(),
  oidc_response_types: strings(),
  default_role: str(),
  jwt_validation_pubkeys: strings(),
  jwt_supported_algs: strings(),
  jwks_url: str(),
  jwks_pairs: { type: "array", items: object({ jwks_url: str() }) },
  jwks_ca_pem: str(),
  bound_issuer: str(),
  provider_config: object({}),
  namespace_in_state: bool(),
  unsupported_critical_cert_extensions: strings(),
});

const roleSchema = object({
  role_type: { enum: ["jwt", "oidc"] },
  expiration_leeway: int(),
  not_before_leeway: int(),
  clock_skew_leeway: int(),
  bound_audiences: strings(),
  bound_subject: str(),
  bound_claims_type: { enum: ["string", "glob"] },
  bound_claims: nullable({ type: "object" }),
  claim_mappings: nullable({ type: "object", additionalProperties: { type: "string" } }),
  user_claim: str(),
  user_claim_json_pointer: bool(),
  groups_claim: str(),
  allowed_redirect_uris: strings(),
  callback_mode: str(),
  oidc_scopes: strings(),
  verbose_oidc_logging: bool(),
  max_age: int(),
  token_policies: strings(),
  token_ttl: int(),
  token_max_ttl: int(),
  token_explicit_max_ttl: int(),
  token_period: int(),
  token_num_uses: int(),
  token_bound_cidrs: strings(),
  token_no_default_policy: bool(),
  token_type: str(),
});

const params = { mount: AUTH_MOUNT_PATTERN };

export const jwtAuthRoutes: VaultRoute[] = [
  {
    pattern: "auth/:mount/role",
    params,
    docs: {
      params: { mount: MOUNT_DOC },
      operations: {
        list: { summary: "List the roles of a JWT/OIDC auth mount", responses: envelope("role names", listData()) },
      },
    },
    operations: { list: listRoles },
  },
  {
    pattern: "auth/:mount/role/:name",
    params: { ...params, name: "[^/]+" },
    normalisedParams: { name: roleNameNormaliser },
    docs: {
      params: { mount: MOUNT_DOC, name: "the role name (lower-case)" },
      operations: {
        read: { summary: "Read a JWT/OIDC role", responses: envelope("the role", roleSchema) },
        update: {
          summary: "Create a JWT/OIDC role, or update it (fields not sent keep their stored values)",
          body: ROLE_FIELDS,
          responses: written("written"),
        },
        delete: { summary: "Delete a JWT/OIDC role", responses: written("deleted") },
      },
    },
    operations: { read: readRole, update: writeRole, delete: deleteRole },
  },
  {
    pattern: "auth/:mount/config",
    params,
    docs: {
      params: { mount: MOUNT_DOC },
      operations: {
        read: {
          summary: "Read a JWT/OIDC auth mount's configuration (never the client secret)",
          responses: envelope("the configuration (404 before one is written)", configSchema),
        },
        update: {
          summary: "Configure a JWT/OIDC auth mount (replaces the configuration; discovery is fetched now)",
          body: CONFIG_FIELDS,
          responses: written("written"),
        },
      },
    },
    operations: { read: readConfig, update: writeConfig },
  },
  {
    pattern: "auth/:mount/login",
    params,
    unauthenticated: ["update"],
    docs: {
      params: { mount: MOUNT_DOC },
      operations: {
        update: {
          summary: "Log in with a JWT (a role of role_type jwt)",
          body: LOGIN_FIELDS,
          responses: authEnvelope("the new token in `auth`"),
        },
      },
    },
    operations: { update: loginHandler },
  },
];
