/**
 * `auth/<mount>/login` of the JWT/OIDC auth method (decision S25), in Vault's order of
 * checks with Vault's texts (hashicorp/vault-plugin-auth-jwt path_login.go), and the step
 * every successful sign-in shares: verified claims → entity, alias and external groups
 * (S27) → token. The OIDC browser flow's callback calls `completeLogin` with the ID token's claims.
 */
import {
  DEFAULT_SUPPORTED_ALGS,
  type KeySource,
  MAX_JWT_BYTES,
  SignatureError,
  verifySignature,
} from "../../lib/oidc/keys";
import { addressInCidrs } from "../access/bound-cidrs";
import { createLoginToken, createLoginTokenForAlias } from "../access/login-tokens";
import { badRequest, permissionDenied } from "../errors";
import { parseFields, unknownFieldWarnings } from "../fields";
import { entityForLogin, metadataText, setExternalMemberships } from "../identity/login-identity";
import { vaultJson } from "../respond";
import type { VaultRequest } from "../router";
import {
  ClaimError,
  type Claims,
  extractMetadata,
  getUserClaim,
  groupNames,
  validateBoundClaims,
  validateRegisteredClaims,
} from "./claims";
import type { AuthMount, JwtConfig, JwtRole } from "./model";
import { signInContext } from "./sign-in-limits";

export const LOGIN_FIELDS = {
  role: { type: "string" },
  jwt: { type: "string" },
  distributed_claim_access_token: { type: "string" },
} as const;

/** What `completeLogin` needs of the request: ids, bindings and the client's address. */
export type LoginRequest = Pick<VaultRequest, "requestId" | "db" | "env" | "headers">;

/** S25: a role with `token_bound_cidrs` serves only clients whose `CF-Connecting-IP` lies in them (403). */
export function assertClientAllowed(role: JwtRole, headers: Headers): void {
  if (role.token_bound_cidrs.length > 0 && !addressInCidrs(headers.get("CF-Connecting-IP"), role.token_bound_cidrs)) {
    throw permissionDenied();
  }
}

/** The keys the mount verifies signatures with, or null when its config names none. */
function keySource(accessor: string, config: JwtConfig): KeySource | null {
  if (config.static_jwks.length > 0) {
    return {
      kind: "static",
      cacheKey: `${accessor}:${config.keys_version}`,
      jwks: config.static_jwks,
    };
  }
  if (config.jwks_url) return { kind: "remote", urls: [config.jwks_url] };
  if (config.jwks_pairs.length > 0) return { kind: "remote", urls: config.jwks_pairs.map((p) => p.jwks_url) };
  if (config.discovered) return { kind: "remote", urls: [config.discovered.jwksUri] };
  return null;
}

/**
 * Verify a JWT for a role: signature with the mount's keys, then hashicorp/cap's checks of
 * `alg`, `iss`, `sub`, `aud` and the time claims with the role's leeways.
 * @throws VaultError 400 `error validating token: …`
 */
export async function verifyToken(mount: AuthMount, config: JwtConfig, role: JwtRole, jwt: string): Promise<Claims> {
  // Bytes, not characters (a JWT is ASCII; anything else is refused here or by the parser).
  // A UTF-16 code unit is at most 3 UTF-8 bytes, so a short token needs no encoding.
  if (
    jwt.length > MAX_JWT_BYTES ||
    (jwt.length * 3 > MAX_JWT_BYTES && new TextEncoder().encode(jwt).byteLength > MAX_JWT_BYTES)
  ) {
    throw badRequest("error validating token: token too large");
  }
  const source = keySource(mount.accessor, config);
  if (!source) throw badRequest("error configuring token validator: unsupported config type");
  let verified: Awaited<ReturnType<typeof verifySignature>>;
  try {
    verified = await verifySignature(jwt, source);
  } catch (err) {
    if (err instanceof SignatureError) throw badRequest(`error validating token: ${err.message}`);
    throw err;
  }
  const algs: readonly string[] =
    config.jwt_supported_algs.length > 0 ? config.jwt_supported_algs : DEFAULT_SUPPORTED_ALGS;
  if (!algs.includes(verified.alg)) {
    throw badRequest(
      "error validating token: invalid algorithm (alg) header parameter: token signed with unexpected algorithm",
    );
  }
  checkRegisteredClaims(
    verified.claims,
    role,
    // A discovery mount expects the provider's issuer unless bound_issuer says otherwise.
    { issuer: config.bound_issuer || config.discovered?.issuer || "", subject: role.bound_subject },
    "error validating token:",
  );
  return verified.claims;
}

/**
 * hashicorp/cap's checks of `iss`, `sub`, `aud` and the time claims, with the role's bound
 * audiences and leeways. A failure is 400 `<errorPrefix> <reason>`: the JWT login and the
 * OIDC callback word it as Vault does for each.
 * @throws VaultError 400
 */
export function checkRegisteredClaims(
  claims: Claims,
  role: JwtRole,
  expected: { issuer: string; subject: string },
  errorPrefix: string,
): void {
  try {
    validateRegisteredClaims(claims, {
      issuer: expected.issuer,
      subject: expected.subject,
      audiences: role.bound_audiences,
      leeways: {
        expiration: role.expiration_leeway,
        notBefore: role.not_before_leeway,
        clockSkew: role.clock_skew_leeway,
      },
      now: Date.now() / 1000,
    });
  } catch (err) {
    if (err instanceof ClaimError) throw badRequest(`${errorPrefix} ${err.message}`);
    throw err;
  }
}

async function login(req: VaultRequest): Promise<Response> {
  const f = parseFields(req.body, LOGIN_FIELDS);
  // S25: the role named in a login is lower-cased (Vault's TypeLowerCaseString).
  const requested = String(f.values.role).toLowerCase();
  const { mount, config, role } = await signInContext(req, requested);
  if (!config) throw badRequest("could not load configuration");
  const roleName = requested || config.default_role;
  if (!roleName) throw badRequest("missing role");
  if (!role) throw badRequest(`role "${roleName}" could not be found`);
  if (role.role_type === "oidc") throw badRequest("role with oidc role_type is not allowed");
  const jwt = String(f.values.jwt);
  if (jwt.length === 0) throw badRequest("missing token");
  assertClientAllowed(role, req.headers);
  const claims = await verifyToken(mount, config, role, jwt);
  // Vault: with no bound audiences, a token that names any audience is refused.
  const aud = claims.aud;
  if (
    role.bound_audiences.length === 0 &&
    ((typeof aud === "string" && aud !== "") || (Array.isArray(aud) && aud.length > 0))
  ) {
    throw badRequest("audience claim found in JWT but no audiences bound to the role");
  }
  return completeLogin(req, mount, roleName, role, claims, unknownFieldWarnings(f.unknown));
}

/**
 * The shared end of every sign-in (S25, S27): Vault's createIdentity (user claim, claim
 * mappings, groups claim), the bound claims, the entity and its alias, the external group
 * memberships, then the token; answers Vault's `auth` block. The caller has verified the
 * claims and checked the role's bound CIDRs (`assertClientAllowed`).
 * @throws VaultError 400 with Vault's texts; 403 for a disabled entity
 */
export async function completeLogin(
  req: LoginRequest,
  mount: AuthMount,
  roleName: string,
  role: JwtRole,
  claims: Claims,
  warnings: string[] = [],
): Promise<Response> {
  let userName: string;
  let metadata: Record<string, string>;
  let groups: string[] | null = null;
  try {
    const user = getUserClaim(claims, role.user_claim, role.user_claim_json_pointer);
    if (user === undefined || user === null) throw new ClaimError(`claim "${role.user_claim}" not found in token`);
    if (typeof user !== "string") throw new ClaimError(`claim "${role.user_claim}" could not be converted to string`);
    if (user === "") throw new ClaimError(`claim "${role.user_claim}" not found in token`);
    userName = user;
    metadata = extractMetadata(claims, role.claim_mappings);
    if (role.groups_claim !== "") groups = groupNames(claims, role.groups_claim);
  } catch (err) {
    if (err instanceof ClaimError) throw badRequest(err.message);
    throw err;
  }
  if (role.bound_claims) {
    try {
      validateBoundClaims(role.bound_claims_type, role.bound_claims, claims);
    } catch (err) {
      if (err instanceof ClaimError) throw badRequest(`error validating claims: ${err.message}`);
      throw err;
    }
  }
  // S27: the alias's metadata is the claim mappings plus the role.
  const aliasMetadata = { ...metadata, role: roleName };
  const tokenInput = {
    policies: role.token_policies,
    noDefaultPolicy: role.token_no_default_policy,
    displayName: `${mount.path.replaceAll("/", "-")}-${userName}`,
    meta: { role: roleName, ...metadata },
    ttl: role.token_ttl,
    maxTtl: role.token_max_ttl,
    explicitMaxTtl: role.token_explicit_max_ttl,
    period: role.token_period,
    numUses: role.token_num_uses,
    boundCidrs: role.token_bound_cidrs,
    authAccessor: mount.accessor,
    path: `auth/${mount.path}/login`,
  };
  // A repeated login whose alias is unchanged (the common case) costs one D1 round trip;
  // a groups claim always takes the full path, which sets the memberships first.
  let created =
    groups === null
      ? await createLoginTokenForAlias(req.db, req.env.KEYWAY_HASH_KEY, tokenInput, {
          accessor: mount.accessor,
          name: userName,
          metadataText: metadataText(aliasMetadata),
        })
      : null;
  if (!created) {
    const entity = await entityForLogin(req.db, mount.accessor, userName, aliasMetadata);
    if (entity.disabled) throw permissionDenied();
    if (groups !== null) await setExternalMemberships(req.db, mount.accessor, entity.entityId, groups);
    created = await createLoginToken(req.db, req.env.KEYWAY_HASH_KEY, { ...tokenInput, entityId: entity.entityId });
  }
  const ctx = created.context;
  return vaultJson(req, {
    auth: {
      client_token: created.token,
      accessor: ctx.accessor,
      policies: ctx.policies,
      token_policies: ctx.tokenPolicies,
      identity_policies: ctx.identityPolicies.length > 0 ? ctx.identityPolicies : undefined,
      metadata: ctx.meta,
      lease_duration: ctx.ttl,
      renewable: true,
      entity_id: ctx.entityId ?? "",
      token_type: "service",
      orphan: true,
      mfa_requirement: null,
      num_uses: ctx.numUses,
    },
    warnings,
  });
}

export { login as loginHandler };
