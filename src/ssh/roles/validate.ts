/**
 * Building a role from a write body with Vault's coercion, validation order and messages
 * (Vault's path_roles.go; decisions S4, S12). Nothing is stored here: a failed
 * validation leaves the stored role untouched.
 */
import { parseCidr } from "../../lib/net/ip";
import { badRequest } from "../errors";
import { type FieldSchema, goFormat, parseFields, unknownFieldWarnings } from "../fields";
import { templateSyntaxError } from "../identity/templates";
import { isWellFormedIssuerRef, normaliseIssuerRef } from "../issuers/service";
import { KeyLengthError, NotAMapError, parseAllowedUserKeyLengths } from "./key-lengths";
import { defaultRole, type Role } from "./model";

/** Every field a role write accepts (Vault's path_roles.go, S12). */
export const ROLE_FIELDS: FieldSchema = {
  key_type: { type: "string" },
  default_user: { type: "string" },
  default_user_template: { type: "bool" },
  cidr_list: { type: "string" },
  exclude_cidr_list: { type: "string" },
  port: { type: "int" },
  allowed_users: { type: "string" },
  allowed_users_template: { type: "bool" },
  allowed_domains: { type: "string" },
  allowed_domains_template: { type: "bool" },
  ttl: { type: "duration" },
  max_ttl: { type: "duration" },
  allowed_critical_options: { type: "string" },
  allowed_extensions: { type: "string" },
  default_critical_options: { type: "map" },
  default_extensions: { type: "map" },
  default_extensions_template: { type: "bool" },
  allow_user_certificates: { type: "bool" },
  allow_host_certificates: { type: "bool" },
  allow_bare_domains: { type: "bool" },
  allow_subdomains: { type: "bool" },
  allow_user_key_ids: { type: "bool" },
  key_id_format: { type: "string" },
  allowed_user_key_lengths: { type: "raw" },
  algorithm_signer: { type: "string" },
  not_before_duration: { type: "duration", default: 30 },
  allow_empty_principals: { type: "bool" },
  issuer_ref: { type: "string" },
  store_certificates: { type: "bool" },
};

/** The largest Go time.Duration, in whole seconds (2562047h47m16s). */
export const MAX_DURATION_SECONDS = 9_223_372_036;

/** Values `algorithm_signer` accepts (Vault's path_roles.go); blank means `default`. */
const ALGORITHM_SIGNERS = ["default", "ssh-rsa", "rsa-sha2-256", "rsa-sha2-512"];

/**
 * Vault's CIDR list validation (Vault's path_roles.go; S4 makes its 500s 400s):
 * split on `,`, trim, drop empties, each must parse. Returns the trimmed entries, without
 * duplicates, in the order given (S12: read back joined by `,`).
 */
function cidrEntries(field: "cidr_list" | "exclude_cidr_list", raw: string): string[] {
  if (raw === "") return [];
  const entries = [
    ...new Set(
      raw
        .split(",")
        .map((e) => e.trim())
        .filter((e) => e !== ""),
    ),
  ];
  const prefix = field === "cidr_list" ? "failed to validate cidr_list" : "failed to validate exclude_cidr_list entry";
  if (entries.length === 0) throw badRequest(`${prefix}: missing CIDR blocks that needs validation`);
  for (const entry of entries) {
    if (!parseCidr(entry)) throw badRequest(`${prefix}: invalid CIDR address: ${entry}`);
  }
  return entries;
}

/** The result of validating a write. */
export interface BuiltRole {
  role: Role;
  /** Unknown-parameter and path-replacement warnings (Vault's sdk/framework). */
  warnings: string[];
}

/**
 * Build the role a write (POST: full replace, S12) describes, or throw the 400 Vault gives.
 * `body` is the JSON object sent; `name` comes from the path.
 */
export function buildRole(name: string, body: Record<string, unknown>): BuiltRole {
  // 1. Field coercion (framework): any bad type fails before anything else.
  const f = parseFields(body, ROLE_FIELDS);
  const v = f.values;
  const warnings: string[] = [];
  const unknown = f.unknown.filter((k) => k !== "role");
  warnings.push(...unknownFieldWarnings(unknown));
  if (Object.hasOwn(body, "role")) {
    warnings.push(
      "Endpoint replaced the value of these parameters with the values captured from the endpoint's path: [role]",
    );
  }
  for (const field of ["ttl", "max_ttl", "not_before_duration"]) {
    if ((v[field] as number) > MAX_DURATION_SECONDS) {
      throw badRequest(
        `Field validation failed: error converting input ${goFormat(body[field])} for field "${field}": duration is larger than the maximum of 2562047h47m16s`,
      );
    }
  }
  let keyLengths: Record<string, number[]> = {};
  let keyLengthError: string | null = null;
  try {
    keyLengths = parseAllowedUserKeyLengths(v.allowed_user_key_lengths);
  } catch (e) {
    if (e instanceof NotAMapError) {
      throw badRequest(
        `Field validation failed: error converting input ${goFormat(body.allowed_user_key_lengths)} for field "allowed_user_key_lengths": '' expected a map, got '${jsonKind(body.allowed_user_key_lengths)}'`,
      );
    }
    if (!(e instanceof KeyLengthError)) throw e;
    // Vault reports this one only for CA roles, after the other CA checks (step 7c).
    keyLengthError = e.message;
  }

  // 3–4. CIDR lists are validated for every key type.
  const cidrList = cidrEntries("cidr_list", v.cidr_list as string);
  const excludeCidrList = cidrEntries("exclude_cidr_list", v.exclude_cidr_list as string);

  // 5. Port 0 means 22. Vault stores anything else; a port outside 1–65535 is refused here (B3).
  let port = v.port as number;
  if (port === 0) port = 22;
  if (port < 1 || port > 65535) throw badRequest(`port must be between 1 and 65535, got ${port}`);

  // 6. Key type.
  const keyType = (v.key_type as string).toLowerCase();
  if (keyType === "") throw badRequest("missing key type");

  // 7. By type.
  if (keyType === "otp") {
    const defaultUser = v.default_user as string;
    if (defaultUser === "") throw badRequest("missing default user");
    // Vault keeps only the OTP fields of an OTP role.
    const role: Role = {
      ...defaultRole(name, "otp"),
      defaultUser,
      cidrList,
      excludeCidrList,
      port,
      allowedUsers: v.allowed_users as string,
    };
    return { role, warnings };
  }
  if (keyType === "dynamic") throw badRequest("dynamic key type roles are no longer supported");
  if (keyType !== "ca") throw badRequest("invalid key type");

  // 7a. algorithm_signer (S4: Vault's 500 is a 400).
  const signer = v.algorithm_signer as string;
  if (signer !== "" && !ALGORITHM_SIGNERS.includes(signer)) throw badRequest(`unknown algorithm signer "${signer}"`);
  // 7b.
  if (!v.allow_user_certificates && !v.allow_host_certificates) {
    throw badRequest("Either 'allow_user_certificates' or 'allow_host_certificates' must be set to 'true'");
  }
  // 7c.
  if (keyLengthError !== null) throw badRequest(`error processing allowed_user_key_lengths: ${keyLengthError}`);
  // 7d.
  const ttl = v.ttl as number;
  const maxTtl = v.max_ttl as number;
  if (ttl !== 0 && maxTtl !== 0 && ttl > maxTtl) {
    throw badRequest('"ttl" value must be less than "max_ttl" when both are specified');
  }

  const role: Role = {
    ...defaultRole(name, "ca"),
    defaultUser: v.default_user as string,
    defaultUserTemplate: v.default_user_template as boolean,
    allowedUsers: v.allowed_users as string,
    allowedUsersTemplate: v.allowed_users_template as boolean,
    allowedDomains: v.allowed_domains as string,
    allowedDomainsTemplate: v.allowed_domains_template as boolean,
    ttl,
    maxTtl,
    allowedCriticalOptions: v.allowed_critical_options as string,
    allowedExtensions: v.allowed_extensions as string,
    defaultCriticalOptions: v.default_critical_options as Record<string, string>,
    defaultExtensions: v.default_extensions as Record<string, string>,
    defaultExtensionsTemplate: v.default_extensions_template as boolean,
    allowUserCertificates: v.allow_user_certificates as boolean,
    allowHostCertificates: v.allow_host_certificates as boolean,
    allowBareDomains: v.allow_bare_domains as boolean,
    allowSubdomains: v.allow_subdomains as boolean,
    allowUserKeyIds: v.allow_user_key_ids as boolean,
    keyIdFormat: v.key_id_format as string,
    allowedUserKeyLengths: keyLengths,
    algorithmSigner: signer === "" ? "default" : signer,
    notBeforeDuration: v.not_before_duration as number,
    allowEmptyPrincipals: v.allow_empty_principals as boolean,
    issuerRef: roleIssuerRef(v.issuer_ref as string),
    storeCertificates: v.store_certificates as boolean,
  };
  checkTemplates(role);
  // Default critical options that no caller may replace: Vault's behaviour is kept, but
  // the role's author is told.
  if (Object.keys(role.defaultCriticalOptions).length > 0 && role.allowedCriticalOptions === "") {
    warnings.push(DEFAULT_CRITICAL_OPTIONS_WARNING);
  }
  return { role, warnings };
}

/**
 * S20: a role's `issuer_ref`, read as OpenBao reads it (trimmed, any spelling of
 * `default` is `default`, blank is `default`) and checked for shape here; that it names
 * an existing issuer is checked by the handler, which reads the mount's issuers.
 */
function roleIssuerRef(raw: string): string {
  const ref = normaliseIssuerRef(raw);
  if (ref === "") return "default";
  if (!isWellFormedIssuerRef(ref)) {
    throw badRequest(`invalid issuer_ref "${ref.slice(0, 128)}": must be "default", an issuer id or an issuer name`);
  }
  return ref;
}

/**
 * The warning of a role write whose `default_critical_options` a signing request can
 * replace: with an empty `allowed_critical_options` any `critical_options` a caller sends
 * replace the defaults (e.g. drop a `force-command`), as in Vault.
 */
export const DEFAULT_CRITICAL_OPTIONS_WARNING =
  "default_critical_options are not enforced: allowed_critical_options is empty, so a signing request that sends critical_options replaces the defaults with any options it chooses; set allowed_critical_options to limit what callers may send";

/**
 * Templates are checked when they are written (Vault only finds out at sign time): a
 * templated field with unbalanced braces or an unknown directive is refused now.
 */
function checkTemplates(role: Role): void {
  const fields: [string, boolean, string[]][] = [
    ["default_user", role.defaultUserTemplate, [role.defaultUser]],
    ["allowed_users", role.allowedUsersTemplate, [role.allowedUsers]],
    ["allowed_domains", role.allowedDomainsTemplate, [role.allowedDomains]],
    ["default_extensions", role.defaultExtensionsTemplate, Object.values(role.defaultExtensions)],
  ];
  for (const [field, enabled, values] of fields) {
    if (!enabled) continue;
    for (const value of values) {
      const problem = templateSyntaxError(value);
      if (problem) throw badRequest(`invalid identity template in ${field}: template '${value}' -> ${problem}`);
    }
  }
}

function jsonKind(value: unknown): string {
  if (Array.isArray(value)) return "slice";
  if (value === null) return "nil";
  if (typeof value === "number") return "float64";
  return typeof value;
}
