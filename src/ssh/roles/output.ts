/**
 * Role read output (decision S12, Vault's path_roles.go): Vault's six fields for OTP
 * roles; Vault's 23 CA fields plus `allow_empty_principals` and OpenBao's `issuer_ref` (S20) for CA roles, with `ttl`,
 * `max_ttl` and `not_before_duration` as compact duration strings.
 */
import type { JsonSchema } from "../../lib/openapi/types";
import { formatDuration } from "../fields";
import { bool, int, object, str, stringMap } from "../openapi/schemas";
import type { Role } from "./model";

/** `data` of `GET roles/:name`. Also the starting point of a PATCH (every value re-parses). */
export function roleData(role: Role): Record<string, unknown> {
  if (role.keyType === "otp") {
    return {
      default_user: role.defaultUser,
      cidr_list: role.cidrList.join(","),
      exclude_cidr_list: role.excludeCidrList.join(","),
      key_type: "otp",
      port: role.port,
      allowed_users: role.allowedUsers,
    };
  }
  return {
    allowed_users: role.allowedUsers,
    allowed_users_template: role.allowedUsersTemplate,
    allowed_domains: role.allowedDomains,
    allowed_domains_template: role.allowedDomainsTemplate,
    default_user: role.defaultUser,
    default_user_template: role.defaultUserTemplate,
    ttl: formatDuration(role.ttl),
    max_ttl: formatDuration(role.maxTtl),
    allowed_critical_options: role.allowedCriticalOptions,
    allowed_extensions: role.allowedExtensions,
    allow_user_certificates: role.allowUserCertificates,
    allow_host_certificates: role.allowHostCertificates,
    allow_bare_domains: role.allowBareDomains,
    allow_subdomains: role.allowSubdomains,
    allow_user_key_ids: role.allowUserKeyIds,
    key_id_format: role.keyIdFormat,
    key_type: "ca",
    default_critical_options: { ...role.defaultCriticalOptions },
    default_extensions: { ...role.defaultExtensions },
    default_extensions_template: role.defaultExtensionsTemplate,
    allowed_user_key_lengths: Object.fromEntries(
      Object.entries(role.allowedUserKeyLengths).map(([k, v]) => [k, [...v]]),
    ),
    algorithm_signer: role.algorithmSigner,
    not_before_duration: formatDuration(role.notBeforeDuration),
    allow_empty_principals: role.allowEmptyPrincipals,
    issuer_ref: role.issuerRef,
    store_certificates: role.storeCertificates,
  };
}

/** B14: the schema of `roleData`, one shape per key type. */
export const roleDataSchema: JsonSchema = {
  oneOf: [
    object({
      default_user: str(),
      cidr_list: str("CIDR blocks joined by `,`"),
      exclude_cidr_list: str(),
      key_type: { const: "otp" },
      port: int(),
      allowed_users: str(),
    }),
    object({
      allowed_users: str(),
      allowed_users_template: bool(),
      allowed_domains: str(),
      allowed_domains_template: bool(),
      default_user: str(),
      default_user_template: bool(),
      ttl: str("compact duration, e.g. `4h`"),
      max_ttl: str(),
      allowed_critical_options: str(),
      allowed_extensions: str(),
      allow_user_certificates: bool(),
      allow_host_certificates: bool(),
      allow_bare_domains: bool(),
      allow_subdomains: bool(),
      allow_user_key_ids: bool(),
      key_id_format: str(),
      key_type: { const: "ca" },
      default_critical_options: stringMap(),
      default_extensions: stringMap(),
      default_extensions_template: bool(),
      allowed_user_key_lengths: { type: "object", additionalProperties: { type: "array", items: { type: "integer" } } },
      algorithm_signer: str(),
      not_before_duration: str(),
      allow_empty_principals: bool(),
      issuer_ref: str(),
      store_certificates: bool(),
    }),
  ],
};
