/**
 * `auth/<mount>/role/:name` of the JWT/OIDC auth method (decision S25): Vault's fields,
 * defaults, order of checks and texts (hashicorp/vault-plugin-auth-jwt path_role.go,
 * sdk/helper/tokenutil). A write merges into the stored role: fields not sent keep their
 * stored values.
 */

import { parseBoundCidrs } from "../access/bound-cidrs";
import { formatGoDuration, TOKEN_MAX_TTL_SECONDS } from "../access/durations";
import { badRequest, notFound, unsupportedPath } from "../errors";
import { convertField, type FieldSchema, parseFields, unknownFieldWarnings } from "../fields";
import { vaultJson, vaultNoContent } from "../respond";
import { NAME_PATTERN, type ParamNormaliser, type VaultRequest } from "../router";
import { normalizeList } from "./claims";
import { type JwtRole, newRole, roleReadData } from "./model";
import { requireAuthMount } from "./mount";
import { deleteJwtRole, listJwtRoles, loadJwtRole, saveJwtRole } from "./repo";

/** S2b: role names in paths are lower-case; another spelling is refused, not rewritten. */
export const roleNameNormaliser: ParamNormaliser = {
  label: "role name",
  rule: "lower-case, without surrounding spaces",
  normalise: (value) => value.trim().toLowerCase(),
};

/** Vault's role-name grammar; any other name routes nowhere (404). */
// lint-regex: NAME_PATTERN is a constant character class grammar, anchored.
const ROLE_NAME = new RegExp(`^${NAME_PATTERN}$`);

export const ROLE_FIELDS = {
  role_type: { type: "string" },
  bound_audiences: { type: "commaList" },
  bound_subject: { type: "string" },
  bound_claims_type: { type: "string" },
  bound_claims: { type: "raw" },
  claim_mappings: { type: "raw" },
  user_claim: { type: "string" },
  user_claim_json_pointer: { type: "bool" },
  groups_claim: { type: "string" },
  oidc_scopes: { type: "commaList" },
  allowed_redirect_uris: { type: "commaList" },
  verbose_oidc_logging: { type: "bool" },
  max_age: { type: "duration" },
  expiration_leeway: { type: "raw" },
  not_before_leeway: { type: "raw" },
  clock_skew_leeway: { type: "raw" },
  token_policies: { type: "commaList" },
  policies: { type: "commaList" },
  token_ttl: { type: "duration" },
  ttl: { type: "duration" },
  token_max_ttl: { type: "duration" },
  max_ttl: { type: "duration" },
  token_explicit_max_ttl: { type: "duration" },
  token_period: { type: "duration" },
  period: { type: "duration" },
  token_num_uses: { type: "int" },
  num_uses: { type: "int" },
  token_bound_cidrs: { type: "commaList" },
  bound_cidrs: { type: "commaList" },
  token_no_default_policy: { type: "bool" },
  token_type: { type: "string" },
} as const satisfies FieldSchema;

/** Metadata keys a claim may not be mapped to (Vault's reservedMetadata). */
const RESERVED_METADATA = ["role"];

/** Vault's TypeSignedDurationSecond: seconds or a Go duration, negative allowed. */
function signedDuration(name: string, value: unknown): number {
  if (typeof value === "number" && Number.isInteger(value)) return value;
  if (typeof value === "string" && /^-\d+$/.test(value.trim())) return Number(value.trim());
  if (typeof value === "string" && value.trim().startsWith("-")) {
    return -(convertField(name, { type: "duration" }, value.trim().slice(1)) as number);
  }
  return convertField(name, { type: "duration" }, value) as number;
}

function roleName(req: VaultRequest): string {
  const name = roleNameNormaliser.normalise(req.params.name ?? "");
  if (!ROLE_NAME.test(name)) throw unsupportedPath();
  return name;
}

/** tokenutil.UpgradeValue: the deprecated name and its `token_` replacement cannot both be sent. */
function upgraded<T>(
  provided: Set<string>,
  values: Record<string, unknown>,
  newName: string,
  oldName: string,
): T | undefined {
  if (provided.has(newName) && provided.has(oldName)) {
    throw badRequest(`Cannot specify both "${newName}" and "${oldName}"`);
  }
  if (provided.has(newName)) return values[newName] as T;
  if (provided.has(oldName)) return values[oldName] as T;
  return undefined;
}

export async function writeRole(req: VaultRequest): Promise<Response> {
  const mount = await requireAuthMount(req);
  const name = roleName(req);
  const f = parseFields(req.body, ROLE_FIELDS);
  const values = f.values;
  const has = (field: string) => f.provided.has(field);
  const role: JwtRole = (await loadJwtRole(req.db, mount.accessor, name)) ?? newRole();
  const warnings: string[] = [];

  if (has("role_type")) {
    const type = String(values.role_type);
    if (type !== "jwt" && type !== "oidc") throw badRequest(`invalid 'role_type': ${type}`);
    role.role_type = type;
  }

  // sdk/helper/tokenutil ParseTokenFields, then the deprecated names.
  const policies = upgraded<string[]>(f.provided, values, "token_policies", "policies");
  if (policies) role.token_policies = [...new Set(policies.map((p) => p.toLowerCase()))];
  const cidrs = upgraded<string[]>(f.provided, values, "token_bound_cidrs", "bound_cidrs");
  if (cidrs) {
    const parsed = parseBoundCidrs(cidrs);
    if ("invalid" in parsed) throw badRequest(`invalid CIDR address or IP: ${parsed.invalid}`);
    role.token_bound_cidrs = parsed.cidrs;
  }
  const numUses = upgraded<number>(f.provided, values, "token_num_uses", "num_uses");
  if (numUses !== undefined) {
    if (numUses < 0) throw badRequest("token_num_uses cannot be negative");
    role.token_num_uses = numUses;
  }
  const ttl = upgraded<number>(f.provided, values, "token_ttl", "ttl");
  if (ttl !== undefined) role.token_ttl = ttl;
  const maxTtl = upgraded<number>(f.provided, values, "token_max_ttl", "max_ttl");
  if (maxTtl !== undefined) role.token_max_ttl = maxTtl;
  const period = upgraded<number>(f.provided, values, "token_period", "period");
  if (period !== undefined) role.token_period = period;
  if (has("token_explicit_max_ttl")) role.token_explicit_max_ttl = values.token_explicit_max_ttl as number;
  if (has("token_no_default_policy")) role.token_no_default_policy = values.token_no_default_policy as boolean;
  if (has("token_type")) {
    const type = String(values.token_type);
    if (type === "batch" || type === "default-batch") {
      throw badRequest(`'token_type' "${type}" is not supported: Keyway issues service tokens only`);
    }
    if (type !== "default" && type !== "default-service" && type !== "service" && type !== "") {
      throw badRequest("invalid 'token_type' value");
    }
    role.token_type = type === "" ? "default-service" : type;
  }
  if (role.token_period > TOKEN_MAX_TTL_SECONDS) {
    throw badRequest(
      `'period' of '"${formatGoDuration(role.token_period)}"' is greater than the backend's maximum lease TTL of '"${formatGoDuration(TOKEN_MAX_TTL_SECONDS)}"'`,
    );
  }

  for (const leeway of ["expiration_leeway", "not_before_leeway", "clock_skew_leeway"] as const) {
    if (has(leeway)) role[leeway] = signedDuration(leeway, values[leeway]);
  }
  if (has("bound_audiences")) role.bound_audiences = values.bound_audiences as string[];
  if (has("bound_subject")) role.bound_subject = String(values.bound_subject);
  if (has("verbose_oidc_logging")) role.verbose_oidc_logging = values.verbose_oidc_logging as boolean;
  if (has("max_age")) role.max_age = values.max_age as number;

  const claimsType = has("bound_claims_type") ? String(values.bound_claims_type) : role.bound_claims_type;
  if (claimsType !== "string" && claimsType !== "glob") throw badRequest(`invalid 'bound_claims_type': ${claimsType}`);
  role.bound_claims_type = claimsType;
  if (has("bound_claims")) role.bound_claims = boundClaims(values.bound_claims);
  if (role.bound_claims && claimsType === "glob") {
    for (const claimValues of Object.values(role.bound_claims)) {
      const list = normalizeList(claimValues);
      if (!list) throw badRequest(`claim is not a string or list: ${String(claimValues)}`);
      for (const value of list) {
        if (typeof value !== "string") throw badRequest(`claim is not a string: ${String(value)}`);
      }
    }
  }

  if (has("claim_mappings")) {
    const mappings = claimMappings(values.claim_mappings);
    const targets = new Set<string>();
    for (const target of Object.values(mappings)) {
      if (RESERVED_METADATA.includes(target)) {
        throw badRequest(`metadata key "${target}" is reserved and may not be a mapping destination`);
      }
      if (targets.has(target)) throw badRequest(`multiple keys are mapped to metadata key "${target}"`);
      targets.add(target);
    }
    role.claim_mappings = Object.keys(mappings).length > 0 ? mappings : null;
  }

  if (has("user_claim")) role.user_claim = String(values.user_claim);
  if (role.user_claim === "") throw badRequest("a user claim must be defined on the role");
  if (has("user_claim_json_pointer")) role.user_claim_json_pointer = values.user_claim_json_pointer as boolean;
  if (has("groups_claim")) role.groups_claim = String(values.groups_claim);
  if (has("oidc_scopes")) role.oidc_scopes = values.oidc_scopes as string[];
  if (has("allowed_redirect_uris")) role.allowed_redirect_uris = values.allowed_redirect_uris as string[];

  if (role.role_type === "oidc" && role.allowed_redirect_uris.length === 0) {
    throw badRequest("'allowed_redirect_uris' must be set if 'role_type' is 'oidc' or unspecified.");
  }
  if (
    role.role_type !== "oidc" &&
    role.bound_audiences.length === 0 &&
    role.token_bound_cidrs.length === 0 &&
    role.bound_subject === "" &&
    (role.bound_claims === null || Object.keys(role.bound_claims).length === 0)
  ) {
    throw badRequest("must have at least one bound constraint when creating/updating a role");
  }
  if (role.token_max_ttl > 0 && role.token_ttl > role.token_max_ttl) {
    throw badRequest("ttl should not be greater than max ttl");
  }
  if (role.token_max_ttl > TOKEN_MAX_TTL_SECONDS) {
    warnings.push(
      "token max ttl is greater than the system or backend mount's maximum TTL value; issued tokens' max TTL value will be truncated",
    );
  }
  if (role.verbose_oidc_logging) {
    warnings.push(
      "verbose_oidc_logging has been enabled for this role. This is not recommended in production since sensitive information may be present in OIDC responses.",
    );
  }
  await saveJwtRole(req.db, mount.accessor, name, role);
  return vaultNoContent(req, [...warnings, ...unknownFieldWarnings(f.unknown)]);
}

/** `bound_claims`: an object whose values are strings, numbers, booleans or lists of them. */
function boundClaims(value: unknown): Record<string, unknown> | null {
  if (value === null || value === undefined || value === "") return null;
  if (typeof value !== "object" || Array.isArray(value)) {
    throw badRequest(
      `Field validation failed: error converting input ${String(value)} for field "bound_claims": '' expected a map, got '${Array.isArray(value) ? "slice" : typeof value}'`,
    );
  }
  const out: Record<string, unknown> = {};
  for (const [claim, claimValue] of Object.entries(value)) {
    if (normalizeList(claimValue) === null) throw badRequest(`claim is not a string or list: ${String(claimValue)}`);
    out[claim] = claimValue;
  }
  return Object.keys(out).length > 0 ? out : null;
}

/** `claim_mappings`: Vault's TypeKVPairs, claim name → metadata key. */
function claimMappings(value: unknown): Record<string, string> {
  if (value === null || value === undefined || value === "") return {};
  if (typeof value !== "object" || Array.isArray(value)) {
    throw badRequest(
      `Field validation failed: error converting input ${String(value)} for field "claim_mappings": '' expected a map, got '${Array.isArray(value) ? "slice" : typeof value}'`,
    );
  }
  const out: Record<string, string> = {};
  for (const [claim, target] of Object.entries(value)) {
    if (typeof target !== "string" && typeof target !== "number" && typeof target !== "boolean") {
      throw badRequest(
        `Field validation failed: error converting input for field "claim_mappings": values must be strings`,
      );
    }
    out[claim] = String(target);
  }
  return out;
}

export async function readRole(req: VaultRequest): Promise<Response> {
  const mount = await requireAuthMount(req);
  const role = await loadJwtRole(req.db, mount.accessor, roleName(req));
  if (!role) throw notFound();
  return vaultJson(req, { data: roleReadData(role) });
}

export async function deleteRole(req: VaultRequest): Promise<Response> {
  const mount = await requireAuthMount(req);
  await deleteJwtRole(req.db, mount.accessor, roleName(req));
  return vaultNoContent(req);
}

export async function listRoles(req: VaultRequest): Promise<Response> {
  const mount = await requireAuthMount(req);
  const keys = await listJwtRoles(req.db, mount.accessor);
  if (keys.length === 0) throw notFound();
  return vaultJson(req, { data: { keys } });
}
