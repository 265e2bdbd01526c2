/**
 * OpenID Connect Discovery 1.0 (https://openid.net/specs/openid-connect-discovery-1_0.html)
 * within S25's fetch rules: `https://` (or loopback `http://`), 5 s, no redirects, at most
 * 64 KiB. Read when a JWT/OIDC mount's config (S25) or an organization's SSO configuration
 * (N16) is written; the endpoints are stored with it. Pure: no bindings.
 */
import { trimTrailing } from "../bytes";
import { checkFetchableUrl, fetchJsonBounded } from "../net/bounded-fetch";
import { FETCH_TIMEOUT_MS, MAX_DISCOVERY_BYTES } from "./keys";

/** What a discovery document says, as stored with the configuration that read it. */
export interface DiscoveredProvider {
  issuer: string;
  jwksUri: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  /** Empty when the provider has none. */
  userinfoEndpoint: string;
}

/**
 * Read the discovery document of the OpenID Provider whose issuer is `url`.
 * @throws Error (a fetch failure, a document that is not an object, another issuer, an unusable `jwks_uri`)
 */
export async function discoverProvider(url: string): Promise<DiscoveredProvider> {
  const base = trimTrailing(url, "/");
  const doc = (await fetchJsonBounded(`${base}/.well-known/openid-configuration`, {
    timeoutMs: FETCH_TIMEOUT_MS,
    maxBytes: MAX_DISCOVERY_BYTES,
  })) as Record<string, unknown> | null;
  if (doc === null || typeof doc !== "object") throw new Error("the discovery document is not an object");
  const text = (name: string) => (typeof doc[name] === "string" ? (doc[name] as string) : "");
  // OpenID Connect Discovery 1.0 §4.3: the issuer must be the URL the document was read from.
  if (trimTrailing(text("issuer"), "/") !== base) {
    throw new Error(`issuer did not match the issuer returned by provider, expected "${url}" got "${text("issuer")}"`);
  }
  const jwksUri = text("jwks_uri");
  if (checkFetchableUrl(jwksUri) !== null) throw new Error(`jwks_uri "${jwksUri}" is not a usable URL`);
  return {
    issuer: text("issuer"),
    jwksUri,
    authorizationEndpoint: text("authorization_endpoint"),
    tokenEndpoint: text("token_endpoint"),
    userinfoEndpoint: text("userinfo_endpoint"),
  };
}
