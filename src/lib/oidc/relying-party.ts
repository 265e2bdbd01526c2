/**
 * The relying-party side of the OpenID Connect authorization code flow (decision S26),
 * as Vault's JWT/OIDC auth method plays it
 * (https://developer.hashicorp.com/vault/docs/auth/jwt#oidc-authentication): the
 * authorization URL with `state`, `nonce` and PKCE S256 (RFC 7636), the redirect-URI check
 * with loopback hosts matched on any port (RFC 8252 §7.3), the code exchange, the ID token
 * checks and the `/userinfo` merge.
 *
 * OAuth and OIDC primitives (PKCE, the token request, the ID token's issuer, audience,
 * nonce, `azp` and `auth_time` checks, the userinfo `sub` check) are oauth4webapi's;
 * Vault's claim rules (its three leeways, bound subject and audiences) are the caller's,
 * and so is the ID token's signature (`verifySignature`: the provider's JWKS, fetched and
 * cached as S25 says). Pure: no bindings, no Hono.
 */
import * as oauth from "oauth4webapi";
import { isLoopbackHost } from "../net/bounded-fetch";
import { boundedProviderFetch, fetchableEndpoint, ProviderFetchError } from "./http";

/** The provider's endpoints, as its discovery document named them when the config was written. */
export interface OidcProvider {
  issuer: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  /** Empty when the provider has none: the userinfo merge is then skipped. */
  userinfoEndpoint: string;
}

/** Why a callback failed after the state was accepted; the route renders Vault's texts. */
export class OidcCallbackError extends Error {
  constructor(
    /** `exchange`: the token request failed; `no_id_token`; `verification`: the ID token was refused. */
    readonly kind: "exchange" | "no_id_token" | "verification",
    message: string,
  ) {
    super(message);
  }
}

/** What an authorization request needs to keep in the state store until the callback. */
export interface StartedAuthorization {
  /** The provider's authorization URL the browser is sent to. */
  url: string;
  nonce: string;
  codeVerifier: string;
}

/**
 * Build the authorization URL (Vault's `auth_url`): `response_type=code`, `scope` `openid`
 * plus the role's `oidc_scopes`, a fresh nonce and PKCE S256 verifier, `max_age` when the
 * role sets one, and `response_mode=form_post` when the config asks for it.
 */
export async function startAuthorization(
  provider: OidcProvider,
  options: {
    clientId: string;
    redirectUri: string;
    state: string;
    scopes: string[];
    maxAge: number;
    formPost: boolean;
  },
): Promise<StartedAuthorization> {
  const nonce = oauth.generateRandomNonce();
  const codeVerifier = oauth.generateRandomCodeVerifier();
  const url = new URL(provider.authorizationEndpoint);
  const scopes = ["openid", ...options.scopes.filter((s) => s !== "openid")];
  url.searchParams.set("client_id", options.clientId);
  url.searchParams.set("code_challenge", await oauth.calculatePKCECodeChallenge(codeVerifier));
  url.searchParams.set("code_challenge_method", "S256");
  if (options.maxAge > 0) url.searchParams.set("max_age", String(options.maxAge));
  url.searchParams.set("nonce", nonce);
  url.searchParams.set("redirect_uri", options.redirectUri);
  if (options.formPost) url.searchParams.set("response_mode", "form_post");
  url.searchParams.set("response_type", "code");
  url.searchParams.set("scope", scopes.join(" "));
  url.searchParams.set("state", options.state);
  return { url: url.href, nonce, codeVerifier };
}

/**
 * Vault's `validRedirect`: the redirect URI must be one of `allowed` exactly, except that
 * for a loopback host (`localhost`, `127.0.0.1`, `::1`) the port is ignored (RFC 8252
 * §7.3: native apps listen on whatever port is free).
 */
export function redirectAllowed(uri: string, allowed: readonly string[]): boolean {
  let input: URL;
  try {
    input = new URL(uri);
  } catch {
    return false;
  }
  const host = input.hostname.replace(/^\[|\]$/g, "");
  if (!["localhost", "127.0.0.1", "::1"].includes(host)) return allowed.includes(uri);
  const portless = (u: URL) => {
    const copy = new URL(u.href);
    copy.port = "";
    return copy.href;
  };
  const wanted = portless(input);
  return allowed.some((candidate) => {
    try {
      return portless(new URL(candidate)) === wanted;
    } catch {
      return false;
    }
  });
}

/** What a successful code exchange yields. */
export interface ExchangedCode {
  /** The ID token's claims, checked. */
  claims: Record<string, unknown>;
  accessToken: string;
}

/**
 * Exchange the code at the token endpoint (client_secret_basic, with the PKCE verifier),
 * then check the ID token: its signature (`verifySignature`), algorithm in `algorithms`,
 * issuer, audience containing the client id (`azp` when there are others), the nonce,
 * `auth_time` against `maxAge` when set, and `exp` / `nbf` within `clockToleranceSeconds`.
 * The caller then applies Vault's own claim rules (bound subject, audiences, its three
 * leeways) to the returned claims.
 */
export async function exchangeCode(
  provider: OidcProvider,
  options: {
    clientId: string;
    clientSecret: string;
    code: string;
    redirectUri: string;
    codeVerifier: string;
    nonce: string;
    maxAge: number;
    /** Seconds of clock difference oauth4webapi's own exp / nbf / auth_time checks allow. */
    clockToleranceSeconds: number;
    algorithms: string[];
    verifySignature: (idToken: string) => Promise<void>;
  },
): Promise<ExchangedCode> {
  const as = authorizationServer(provider, options.algorithms);
  const client: oauth.Client = { client_id: options.clientId, [oauth.clockTolerance]: options.clockToleranceSeconds };
  let result: oauth.TokenEndpointResponse;
  try {
    // The caller has already checked (and spent) the state; oauth4webapi only needs the
    // code in the shape of callback parameters, so a placeholder state stands in for it.
    const parameters = oauth.validateAuthResponse(
      as,
      client,
      new URLSearchParams({ code: options.code, state: "-" }),
      "-",
    );
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      oauth.ClientSecretBasic(options.clientSecret),
      parameters,
      options.redirectUri,
      options.codeVerifier,
      providerOptions(provider.tokenEndpoint),
    );
    // A token answer without an ID token is told apart below (Vault's own message).
    const text = await response.clone().text();
    if (response.status === 200 && !/"id_token"\s*:/.test(text)) {
      throw new OidcCallbackError("no_id_token", "No id_token found in response.");
    }
    result = await oauth.processAuthorizationCodeResponse(as, client, response, {
      expectedNonce: options.nonce,
      maxAge: options.maxAge > 0 ? options.maxAge : oauth.skipAuthTimeCheck,
      requireIdToken: true,
    });
  } catch (err) {
    if (err instanceof OidcCallbackError) throw err;
    if (isIdTokenProblem(err)) throw new OidcCallbackError("verification", describe(err));
    throw new OidcCallbackError("exchange", describe(err));
  }
  const idToken = result.id_token!;
  try {
    await options.verifySignature(idToken);
  } catch (err) {
    throw new OidcCallbackError("verification", describe(err));
  }
  const claims = { ...(oauth.getValidatedIdTokenClaims(result) as Record<string, unknown>) };
  return { claims, accessToken: result.access_token };
}

/**
 * Vault's `/userinfo` merge (path_oidc.go): fetch the provider's userinfo with the access
 * token, require its `sub` to be the ID token's, and let its claims overwrite the ID
 * token's (a JSON decode into the same map). A failure is returned, never thrown: it is
 * logged and the sign-in goes on with the ID token's claims.
 */
export async function mergeUserinfo(
  provider: OidcProvider,
  clientId: string,
  accessToken: string,
  claims: Record<string, unknown>,
): Promise<{ claims: Record<string, unknown>; problem: string | null }> {
  if (provider.userinfoEndpoint === "") return { claims, problem: null };
  const as = authorizationServer(provider, []);
  const client: oauth.Client = { client_id: clientId };
  try {
    const response = await oauth.userInfoRequest(as, client, accessToken, providerOptions(provider.userinfoEndpoint));
    const info = await oauth.processUserInfoResponse(as, client, String(claims.sub), response);
    return { claims: { ...claims, ...(info as Record<string, unknown>) }, problem: null };
  } catch (err) {
    return { claims, problem: describe(err) };
  }
}

function authorizationServer(provider: OidcProvider, algorithms: string[]): oauth.AuthorizationServer {
  return {
    issuer: provider.issuer,
    authorization_endpoint: provider.authorizationEndpoint,
    token_endpoint: provider.tokenEndpoint,
    ...(provider.userinfoEndpoint ? { userinfo_endpoint: provider.userinfoEndpoint } : {}),
    ...(algorithms.length > 0 ? { id_token_signing_alg_values_supported: algorithms } : {}),
  };
}

/** oauth4webapi's request options: the bounded fetch, and plain http only to a loopback endpoint (S25). */
function providerOptions(endpoint: string): {
  [oauth.customFetch]: typeof boundedProviderFetch;
  [oauth.allowInsecureRequests]?: boolean;
} {
  let loopbackHttp = false;
  try {
    const url = new URL(endpoint);
    loopbackHttp = url.protocol === "http:" && isLoopbackHost(url.hostname) && fetchableEndpoint(url);
  } catch {
    // An unparseable endpoint fails in oauth4webapi with its own message.
  }
  return {
    [oauth.customFetch]: boundedProviderFetch,
    ...(loopbackHttp ? { [oauth.allowInsecureRequests]: true } : {}),
  };
}

/** oauth4webapi errors about the ID token's content, as opposed to the exchange itself. */
function isIdTokenProblem(err: unknown): boolean {
  if (!(err instanceof oauth.OperationProcessingError)) return false;
  return (
    [oauth.JWT_CLAIM_COMPARISON, oauth.JWT_TIMESTAMP_CHECK].includes(err.code ?? "") || /JWT|ID Token/.test(err.message)
  );
}

function describe(err: unknown): string {
  if (err instanceof oauth.ResponseBodyError) {
    return err.error_description ? `${err.error}: ${err.error_description}` : err.error;
  }
  if (err instanceof ProviderFetchError || err instanceof Error) return err.message;
  return String(err);
}
