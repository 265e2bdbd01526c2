/**
 * The decisions of the certificate pipeline shared by `sign` and `issue`
 * (Vault's builtin/logical/ssh/path_issue_sign.go; decisions S7, S8): key ID, certificate type, principals,
 * TTL and validity window, critical options and extensions. Pure: every function takes the
 * role and request values and returns a value or throws PolicyError with the 400 text.
 */

import {
  containsTemplate,
  renderFailure,
  renderTemplate,
  type TemplateEntity,
  TemplateError,
} from "../identity/templates";
import type { Role } from "../roles/model";

/** A request the role refuses; `message` is the text of the 400. */
export class PolicyError extends Error {}

/** PROTOCOL.certkeys certificate type of a user certificate. */
export const USER_CERT = 1;
/** PROTOCOL.certkeys certificate type of a host certificate. */
export const HOST_CERT = 2;

/** Go's sort.Strings order: byte order of the UTF-8 encoding (= code point order). */
export function compareGoStrings(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

/** strutil.ParseStringSlice + RemoveDuplicates(sorted): split on `,`, trim, drop empties, dedupe, sort. */
export function parsePrincipalList(text: string): string[] {
  const items = text
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  return [...new Set(items)].sort(compareGoStrings);
}

/**
 * Key ID (Vault's path_issue_sign.go, decision S7): a caller's `key_id` when the role allows it, else
 * the role's `key_id_format` with its variables, else the token display name. The result is
 * the text around each `{{public_key_hash}}` of the format (one part when there is none):
 * join them with the hash once the subject key is known.
 */
export function keyIdFor(role: Role, roleName: string, requestedKeyId: string, tokenDisplayName: string): string[] {
  if (requestedKeyId !== "") {
    if (!role.allowUserKeyIds) throw new PolicyError("setting key_id is not allowed by role");
    return [requestedKeyId];
  }
  if (role.keyIdFormat === "") return [tokenDisplayName];
  // Substituted piecewise, so a display name that contains `{{role_name}}` stays literal.
  return role.keyIdFormat
    .split("{{public_key_hash}}")
    .map((part) =>
      part.replace(/\{\{(token_display_name|role_name)\}\}/g, (_, v: string) =>
        v === "role_name" ? roleName : tokenDisplayName,
      ),
    );
}

/** Certificate type (Vault's path_issue_sign.go). Case-sensitive. */
export function certTypeFor(role: Role, certType: string): 1 | 2 {
  if (certType === "user") {
    if (!role.allowUserCertificates) throw new PolicyError("cert_type 'user' is not allowed by role");
    return USER_CERT;
  }
  if (certType === "host") {
    if (!role.allowHostCertificates) throw new PolicyError("cert_type 'host' is not allowed by role");
    return HOST_CERT;
  }
  throw new PolicyError("cert_type must be either 'user' or 'host'");
}

/**
 * Render one template-flagged value from the caller's entity (Vault's ACL templating). Without an
 * entity, or without a directive, the value is used literally.
 */
function renderValue(value: string, entity: TemplateEntity | null, now: number): string {
  if (!entity || !containsTemplate(value)) return value;
  try {
    return renderTemplate(value, entity, now);
  } catch (e) {
    if (e instanceof TemplateError) throw new PolicyError(renderFailure(value, e.message));
    throw e;
  }
}

/** Request values for the principal decision. */
export interface PrincipalInput {
  certType: 1 | 2;
  /** `valid_principals` as sent; undefined when the field was absent. */
  validPrincipals: string | undefined;
  /** The caller's entity (S5a), or null (root token, deleted entity). */
  entity: TemplateEntity | null;
  now: number;
}

/**
 * Valid principals (Vault's path_issue_sign.go, decision S8 = Vault ≥1.17.6): requested or default
 * principals, trimmed, de-duplicated and sorted, each checked against the role's allowed
 * users (user certificates) or domains (host certificates).
 */
export function principalsFor(role: Role, input: PrincipalInput): string[] {
  const user = input.certType === USER_CERT;
  // The default principal: the (rendered) default_user, for user certificates only.
  let defaultPrincipal = "";
  if (user) {
    defaultPrincipal = role.defaultUserTemplate
      ? renderValue(role.defaultUser, input.entity, input.now)
      : role.defaultUser;
  }
  const allowedRaw = user ? role.allowedUsers : role.allowedDomains;
  const templated = user ? role.allowedUsersTemplate : role.allowedDomainsTemplate;

  let principals = parsePrincipalList(input.validPrincipals ?? defaultPrincipal);
  // S8: an absent or empty valid_principals falls back to the default principal.
  if (principals.length === 0 && defaultPrincipal !== "") principals = parsePrincipalList(defaultPrincipal);
  if (principals.length === 0) {
    if (role.allowEmptyPrincipals) return [];
    throw new PolicyError("empty valid principals not allowed by role");
  }

  // Each allowed entry is rendered on its own; a rendered value holding commas allows each
  // of its names (Vault's ACL templating "comma semantics").
  const allowed = new Set<string>();
  for (const entry of parsePrincipalList(allowedRaw)) {
    const rendered = templated ? renderValue(entry, input.entity, input.now) : entry;
    for (const name of templated ? parsePrincipalList(rendered) : [rendered]) allowed.add(name);
  }
  if (allowed.size === 0) throw new PolicyError("role is not configured to allow any principals");
  if (allowedRaw === "*") return principals;

  for (const principal of principals) {
    const ok = user ? allowed.has(principal) : hostAllowed(role, allowed, principal);
    if (!ok) throw new PolicyError(`${principal} is not a valid value for valid_principals`);
  }
  return principals;
}

/** Host principals (Vault's path_issue_sign.go): bare domains with allow_bare_domains, subdomains with allow_subdomains. */
function hostAllowed(role: Role, allowed: Set<string>, principal: string): boolean {
  for (const domain of allowed) {
    if (principal === domain && role.allowBareDomains) return true;
    if (role.allowSubdomains && principal.endsWith(`.${domain}`)) return true;
  }
  return false;
}

/** Mount lease TTLs, the "system" values of Vault's TTL fallbacks (S1). */
export interface SystemTtls {
  defaultLeaseTtl: number;
  maxLeaseTtl: number;
}

/**
 * Certificate TTL in seconds (Vault's path_issue_sign.go): the caller's `ttl` when sent (0 = the mount
 * default), else the role's, else the mount default; capped by the role's `max_ttl` or the
 * mount maximum — silently for defaults, with a 400 for a caller's value.
 */
export function ttlFor(role: Role, requestedTtl: number | undefined, system: SystemTtls): number {
  let ttl = requestedTtl ?? role.ttl;
  if (ttl === 0) ttl = system.defaultLeaseTtl;
  const max = role.maxTtl !== 0 ? role.maxTtl : system.maxLeaseTtl;
  if (ttl > max) {
    if (requestedTtl === undefined) return max;
    throw new PolicyError(`ttl is larger than maximum allowed ${max}`);
  }
  return ttl;
}

/** Validity window (Vault's path_issue_sign.go): backdated by not_before_duration, never before the epoch. */
export function validityFor(role: Role, ttl: number, nowMs: number): { validAfter: bigint; validBefore: bigint } {
  const now = Math.floor(nowMs / 1000);
  return { validAfter: BigInt(Math.max(0, now - role.notBeforeDuration)), validBefore: BigInt(now + ttl) };
}

/**
 * Critical options (Vault's path_issue_sign.go): the caller's replace the role's defaults; an empty
 * `allowed_critical_options` allows any, else each name must be listed (split on `,`, untrimmed).
 */
export function criticalOptionsFor(role: Role, requested: Record<string, string>): Record<string, string> {
  if (Object.keys(requested).length === 0) return { ...role.defaultCriticalOptions };
  if (role.allowedCriticalOptions !== "") {
    const allowed = role.allowedCriticalOptions.split(",");
    const refused = Object.keys(requested)
      .filter((k) => !allowed.includes(k))
      .sort(compareGoStrings);
    if (refused.length > 0) throw new PolicyError(`critical options not on allowed list: [${refused.join(" ")}]`);
  }
  return { ...requested };
}

/** The warning when templated default extensions were skipped for lack of an entity (Vault's path_issue_sign.go). */
export const SKIPPED_EXTENSIONS_WARNING =
  "default_extension templating enabled with at least one extension requiring identity templating. However, this request lacked identity entity information, causing one or more extensions to be skipped from the generated certificate.";

/**
 * Extensions (Vault's path_issue_sign.go): the caller's replace the defaults and must each be in
 * `allowed_extensions` (`*` = any; empty = none). Without a caller's extensions, the role's
 * defaults, rendered when `default_extensions_template` is on; without an entity the
 * templated ones are dropped and `skipped` is true.
 */
export function extensionsFor(
  role: Role,
  requested: Record<string, string>,
  entity: TemplateEntity | null,
  now: number,
): { extensions: Record<string, string>; skipped: boolean } {
  if (Object.keys(requested).length > 0) {
    if (role.allowedExtensions === "*") return { extensions: { ...requested }, skipped: false };
    const allowed = role.allowedExtensions.split(",");
    const refused = Object.keys(requested)
      .filter((k) => !allowed.includes(k))
      .sort(compareGoStrings);
    if (refused.length > 0) throw new PolicyError(`extensions [${refused.join(" ")}] are not on allowed list`);
    return { extensions: { ...requested }, skipped: false };
  }
  if (!role.defaultExtensionsTemplate) return { extensions: { ...role.defaultExtensions }, skipped: false };
  const extensions: Record<string, string> = {};
  let skipped = false;
  for (const [name, value] of Object.entries(role.defaultExtensions)) {
    if (!containsTemplate(value)) extensions[name] = value;
    else if (!entity) skipped = true;
    else extensions[name] = renderValue(value, entity, now);
  }
  return { extensions, skipped };
}
