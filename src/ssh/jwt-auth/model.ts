/**
 * The JWT/OIDC auth method's stored configuration and roles (decision S25), in the field
 * names of Vault's JWT plugin (https://developer.hashicorp.com/vault/api-docs/auth/jwt).
 */
import type { DiscoveredProvider } from "../../lib/oidc/discovery";

/** A mount enabled through sys/auth (S24). */
export interface AuthMount {
  /** Below `auth/`, without the trailing slash, e.g. `jwt` or `ci/github`. */
  path: string;
  type: "jwt" | "oidc";
  accessor: string;
  description: string;
  createdAt: number;
}

/** `auth/<m>/config` as stored, without the client secret (kept encrypted beside it). */
export interface JwtConfig {
  oidc_discovery_url: string;
  oidc_client_id: string;
  oidc_response_mode: string;
  oidc_response_types: string[];
  jwks_url: string;
  jwks_pairs: { jwks_url: string }[];
  jwt_validation_pubkeys: string[];
  jwt_supported_algs: string[];
  bound_issuer: string;
  default_role: string;
  namespace_in_state: boolean;
  /** Filled from the discovery document when the config is written (S25); null without discovery. */
  discovered: DiscoveredProvider | null;
  /** Public keys of `jwt_validation_pubkeys` as JWKs, converted once when the config is written. */
  static_jwks: Record<string, unknown>[];
  /** Random, new at every config write: names this config's imported keys in the per-isolate cache. */
  keys_version: string;
  /** True when an `oidc_client_secret` is stored. */
  has_client_secret: boolean;
}

/** A role as stored (Vault's field names; durations in seconds). */
export interface JwtRole {
  role_type: "jwt" | "oidc";
  bound_audiences: string[];
  bound_subject: string;
  bound_claims_type: "string" | "glob";
  bound_claims: Record<string, unknown> | null;
  claim_mappings: Record<string, string> | null;
  user_claim: string;
  user_claim_json_pointer: boolean;
  groups_claim: string;
  oidc_scopes: string[];
  allowed_redirect_uris: string[];
  verbose_oidc_logging: boolean;
  max_age: number;
  expiration_leeway: number;
  not_before_leeway: number;
  clock_skew_leeway: number;
  token_policies: string[];
  token_ttl: number;
  token_max_ttl: number;
  token_explicit_max_ttl: number;
  token_period: number;
  token_num_uses: number;
  token_bound_cidrs: string[];
  token_no_default_policy: boolean;
  /** `default`, `default-service` or `service`: every one issues service tokens. */
  token_type: string;
}

/** Vault's defaults for a new role (path_role.go). */
export function newRole(): JwtRole {
  return {
    role_type: "oidc",
    bound_audiences: [],
    bound_subject: "",
    bound_claims_type: "string",
    bound_claims: null,
    claim_mappings: null,
    user_claim: "",
    user_claim_json_pointer: false,
    groups_claim: "",
    oidc_scopes: [],
    allowed_redirect_uris: [],
    verbose_oidc_logging: false,
    max_age: 0,
    expiration_leeway: 150,
    not_before_leeway: 150,
    clock_skew_leeway: 60,
    token_policies: [],
    token_ttl: 0,
    token_max_ttl: 0,
    token_explicit_max_ttl: 0,
    token_period: 0,
    token_num_uses: 0,
    token_bound_cidrs: [],
    token_no_default_policy: false,
    token_type: "default-service",
  };
}

/** The role as `GET auth/<m>/role/:name` answers it (Vault's read shape). */
export function roleReadData(role: JwtRole): Record<string, unknown> {
  return {
    role_type: role.role_type,
    expiration_leeway: role.expiration_leeway,
    not_before_leeway: role.not_before_leeway,
    clock_skew_leeway: role.clock_skew_leeway,
    bound_audiences: role.bound_audiences,
    bound_subject: role.bound_subject,
    bound_claims_type: role.bound_claims_type,
    bound_claims: role.bound_claims,
    claim_mappings: role.claim_mappings,
    user_claim: role.user_claim,
    user_claim_json_pointer: role.user_claim_json_pointer,
    groups_claim: role.groups_claim,
    allowed_redirect_uris: role.allowed_redirect_uris,
    callback_mode: "client",
    oidc_scopes: role.oidc_scopes,
    verbose_oidc_logging: role.verbose_oidc_logging,
    max_age: role.max_age,
    token_policies: role.token_policies,
    token_ttl: role.token_ttl,
    token_max_ttl: role.token_max_ttl,
    token_explicit_max_ttl: role.token_explicit_max_ttl,
    token_period: role.token_period,
    token_num_uses: role.token_num_uses,
    token_bound_cidrs: role.token_bound_cidrs,
    token_no_default_policy: role.token_no_default_policy,
    token_type: role.token_type,
  };
}

/** The config as `GET auth/<m>/config` answers it: never the client secret (Vault's read shape). */
export function configReadData(config: JwtConfig): Record<string, unknown> {
  return {
    oidc_discovery_url: config.oidc_discovery_url,
    oidc_discovery_ca_pem: "",
    oidc_client_id: config.oidc_client_id,
    oidc_response_mode: config.oidc_response_mode,
    oidc_response_types: config.oidc_response_types,
    default_role: config.default_role,
    jwt_validation_pubkeys: config.jwt_validation_pubkeys,
    jwt_supported_algs: config.jwt_supported_algs,
    jwks_url: config.jwks_url,
    jwks_pairs: config.jwks_pairs,
    jwks_ca_pem: "",
    bound_issuer: config.bound_issuer,
    provider_config: {},
    namespace_in_state: config.namespace_in_state,
    unsupported_critical_cert_extensions: [],
  };
}
