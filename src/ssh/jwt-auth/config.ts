/**
 * `auth/<mount>/config` of the JWT/OIDC auth method (decision S25): Vault's fields, order
 * of checks and texts (hashicorp/vault-plugin-auth-jwt path_config.go), with the
 * differences Workers force (400 naming the field) and S25's URL and fetch rules.
 * One mount serves JWT login and the OIDC browser flow at once (a Keyway extension).
 */

import { randomBytes, toHex } from "../../lib/bytes";
import { checkFetchableUrl } from "../../lib/net/bounded-fetch";
import type { DiscoveredProvider } from "../../lib/oidc/discovery";
import { discoverProvider as discover } from "../../lib/oidc/discovery";
import { DEFAULT_SUPPORTED_ALGS, fetchJwks, pemToJwk } from "../../lib/oidc/keys";
import { badRequest, notFound } from "../errors";
import { type FieldSchema, parseFields, unknownFieldWarnings } from "../fields";
import { vaultJson, vaultNoContent } from "../respond";
import type { VaultRequest } from "../router";
import { configReadData, type JwtConfig } from "./model";
import { requireAuthMount } from "./mount";
import { loadJwtConfig, saveJwtConfig } from "./repo";

export const CONFIG_FIELDS = {
  oidc_discovery_url: { type: "string" },
  oidc_discovery_ca_pem: { type: "string" },
  oidc_client_id: { type: "string" },
  oidc_client_secret: { type: "string" },
  oidc_response_mode: { type: "string" },
  oidc_response_types: { type: "commaList" },
  jwks_url: { type: "string" },
  jwks_ca_pem: { type: "string" },
  jwks_pairs: { type: "raw" },
  jwt_validation_pubkeys: { type: "commaList" },
  jwt_supported_algs: { type: "commaList" },
  bound_issuer: { type: "string" },
  default_role: { type: "string" },
  provider_config: { type: "raw" },
  namespace_in_state: { type: "bool" },
  unsupported_critical_cert_extensions: { type: "commaList" },
} as const satisfies FieldSchema;

/** Algorithms hashicorp/cap knows (SupportedSigningAlgorithm). */
const KNOWN_ALGS = new Set<string>(DEFAULT_SUPPORTED_ALGS);

const WORKERS_CA =
  "is not supported: a Worker's fetch cannot pin a CA, so the provider's certificate must chain to a public root";

async function jwksReachable(url: string): Promise<boolean> {
  try {
    await fetchJwks(url);
    return true;
  } catch {
    return false;
  }
}

export async function readConfig(req: VaultRequest): Promise<Response> {
  const mount = await requireAuthMount(req);
  const config = await loadJwtConfig(req.db, mount.accessor);
  // Vault answers a read of a config never written with 404.
  if (!config) throw notFound();
  return vaultJson(req, { data: configReadData(config) });
}

export async function writeConfig(req: VaultRequest): Promise<Response> {
  const mount = await requireAuthMount(req);
  const f = parseFields(req.body, CONFIG_FIELDS);
  const v = f.values as {
    oidc_discovery_url: string;
    oidc_discovery_ca_pem: string;
    oidc_client_id: string;
    oidc_client_secret: string;
    oidc_response_mode: string;
    oidc_response_types: string[];
    jwks_url: string;
    jwks_ca_pem: string;
    jwks_pairs: unknown;
    jwt_validation_pubkeys: string[];
    jwt_supported_algs: string[];
    bound_issuer: string;
    default_role: string;
    provider_config: unknown;
    namespace_in_state: boolean;
    unsupported_critical_cert_extensions: string[];
  };
  const warnings = unknownFieldWarnings(f.unknown);

  // S25: what a Worker cannot do is refused, naming the field.
  if (v.oidc_discovery_ca_pem.trim() !== "") throw badRequest(`'oidc_discovery_ca_pem' ${WORKERS_CA}`);
  if (v.jwks_ca_pem.trim() !== "") throw badRequest(`'jwks_ca_pem' ${WORKERS_CA}`);
  if (!isEmptyValue(v.provider_config)) {
    throw badRequest(
      "'provider_config' is not supported: provider-specific group fetching needs the provider's own APIs",
    );
  }
  if (v.oidc_response_types.some((t) => t !== "code")) {
    throw badRequest(
      "'oidc_response_types' other than \"code\" is not supported: only the authorization code flow is served",
    );
  }
  if (v.unsupported_critical_cert_extensions.length > 0) {
    throw badRequest(`'unsupported_critical_cert_extensions' ${WORKERS_CA}`);
  }
  const pairs = parseJwksPairs(v.jwks_pairs);

  // Vault's order (path_config.go pathConfigWrite).
  const methods = [
    v.oidc_discovery_url !== "",
    v.jwt_validation_pubkeys.length > 0,
    v.jwks_url !== "",
    pairs.length > 0,
  ].filter(Boolean).length;
  if (methods !== 1) {
    throw badRequest(
      "exactly one of 'jwt_validation_pubkeys', 'jwks_url', 'jwks_pairs' or 'oidc_discovery_url' must be set",
    );
  }
  if ((v.oidc_client_id !== "") !== (v.oidc_client_secret !== "")) {
    throw badRequest("both 'oidc_client_id' and 'oidc_client_secret' must be set for OIDC");
  }
  let discovered: DiscoveredProvider | null = null;
  const staticJwks: Record<string, unknown>[] = [];
  if (v.oidc_discovery_url !== "") {
    const bad = checkFetchableUrl(v.oidc_discovery_url);
    if (bad !== null) throw badRequest(`'oidc_discovery_url' ${bad}`);
    try {
      discovered = await discover(v.oidc_discovery_url);
    } catch {
      throw badRequest("error checking oidc discovery URL");
    }
  } else if (v.oidc_client_id !== "") {
    throw badRequest("'oidc_discovery_url' must be set for OIDC");
  } else if (pairs.length > 0 && v.bound_issuer !== "") {
    throw badRequest("Bound issuer is not supported for use with 'jwks_pairs'");
  } else if (v.jwks_url !== "") {
    const bad = checkFetchableUrl(v.jwks_url);
    if (bad !== null) throw badRequest(`'jwks_url' ${bad}`);
    if (!(await jwksReachable(v.jwks_url))) throw badRequest(`error checking jwks URL ${v.jwks_url}`);
  } else if (pairs.length > 0) {
    for (const pair of pairs) {
      const bad = checkFetchableUrl(pair.jwks_url);
      if (bad !== null) throw badRequest(`invalid jwks_pairs: 'jwks_url' ${bad}`);
      if (!(await jwksReachable(pair.jwks_url))) throw badRequest(`error checking jwks URL ${pair.jwks_url}`);
    }
  } else {
    for (const pem of v.jwt_validation_pubkeys) {
      const jwk = await pemToJwk(pem);
      if (!jwk) throw badRequest("error parsing public key: data does not contain any valid public keys");
      staticJwks.push(jwk as Record<string, unknown>);
    }
  }
  for (const alg of v.jwt_supported_algs) {
    if (!KNOWN_ALGS.has(alg)) throw badRequest(`invalid jwt_supported_algs: unsupported signing algorithm "${alg}"`);
  }
  if (v.oidc_response_mode !== "" && v.oidc_response_mode !== "query" && v.oidc_response_mode !== "form_post") {
    throw badRequest(`invalid response_mode: "${v.oidc_response_mode}"`);
  }

  const existing = await loadJwtConfig(req.db, mount.accessor);
  const config: JwtConfig = {
    oidc_discovery_url: v.oidc_discovery_url,
    oidc_client_id: v.oidc_client_id,
    oidc_response_mode: v.oidc_response_mode,
    oidc_response_types: v.oidc_response_types,
    jwks_url: v.jwks_url,
    jwks_pairs: pairs,
    jwt_validation_pubkeys: v.jwt_validation_pubkeys,
    jwt_supported_algs: v.jwt_supported_algs,
    bound_issuer: v.bound_issuer,
    default_role: v.default_role.toLowerCase(),
    // Vault: new configs default to true, an update keeps the stored value unless given.
    namespace_in_state: f.provided.has("namespace_in_state")
      ? v.namespace_in_state
      : (existing?.namespace_in_state ?? true),
    discovered,
    static_jwks: staticJwks,
    keys_version: toHex(randomBytes(8)),
    has_client_secret: v.oidc_client_secret !== "",
  };
  if (f.provided.has("namespace_in_state")) {
    warnings.push("namespace_in_state is ignored: Keyway has no namespaces");
  }
  await saveJwtConfig(req.env, req.db, mount.accessor, config, v.oidc_client_secret);
  return vaultNoContent(req, warnings);
}

function isEmptyValue(value: unknown): boolean {
  if (value === undefined || value === null || value === "") return true;
  if (typeof value === "object" && !Array.isArray(value)) return Object.keys(value).length === 0;
  return false;
}

/** `jwks_pairs`: a list of `{jwks_url, jwks_ca_pem}` (a CA PEM is refused, S25). */
function parseJwksPairs(value: unknown): { jwks_url: string }[] {
  if (value === undefined || value === null || value === "") return [];
  if (!Array.isArray(value)) throw badRequest("invalid jwks_pairs: must be a list of objects with 'jwks_url'");
  return value.map((pair) => {
    if (pair === null || typeof pair !== "object" || Array.isArray(pair)) {
      throw badRequest("invalid jwks_pairs: must be a list of objects with 'jwks_url'");
    }
    const { jwks_url: url, jwks_ca_pem: pem } = pair as Record<string, unknown>;
    if (typeof url !== "string" || url === "") throw badRequest("invalid jwks_pairs: each entry needs a 'jwks_url'");
    if (typeof pem === "string" && pem.trim() !== "") throw badRequest(`'jwks_pairs[].jwks_ca_pem' ${WORKERS_CA}`);
    return { jwks_url: url };
  });
}
