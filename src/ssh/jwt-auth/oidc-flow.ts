/**
 * The OIDC browser flow of the JWT/OIDC auth method (decisions S26, S28), as Vault's plugin
 * serves it (https://developer.hashicorp.com/vault/api-docs/auth/jwt#oidc-authorization-url-request):
 *
 * - `POST auth/<m>/oidc/auth_url {role, redirect_uri, client_nonce}` → the provider's
 *   authorization URL with `state`, `nonce` and PKCE S256. Deliberately vague, as Vault is:
 *   a redirect URI the role does not allow, or a state that cannot be stored, answers 200
 *   with an empty `auth_url`.
 * - `GET auth/<m>/oidc/callback?state&code&client_nonce` consumes the state (B21: read and
 *   deleted in one call), checks `client_nonce`, exchanges the code, checks the ID token,
 *   merges `/userinfo`, then signs in as `login` does (`completeLogin`).
 * - `POST auth/<m>/oidc/callback` (form_post mode only, else 405) keeps the posted code
 *   under the state without consuming it and answers a page that re-issues the GET with
 *   `code=no_code` (Vault's marker for "use the stored code").
 *
 * All three are unauthenticated (S24's additions to S16a) and rate limited (S28).
 */
import { logWarn } from "../../lib/log";
import { DEFAULT_SUPPORTED_ALGS, MAX_JWT_BYTES, verifySignature } from "../../lib/oidc/keys";
import {
  exchangeCode,
  mergeUserinfo,
  OidcCallbackError,
  type OidcProvider,
  redirectAllowed,
  startAuthorization,
} from "../../lib/oidc/relying-party";
import { newSignInState } from "../../platform/sign-in";
import { MAX_STATE_TTL_MS } from "../../platform/sign-in-store";
import { badRequest, unsupportedOperation } from "../errors";
import { parseFields, unknownFieldWarnings } from "../fields";
import { authEnvelope, envelope, html, object, str } from "../openapi/schemas";
import { vaultJson } from "../respond";
import type { VaultRequest, VaultRoute } from "../router";
import type { Claims } from "./claims";
import { assertClientAllowed, checkRegisteredClaims, completeLogin } from "./login";
import type { JwtConfig } from "./model";
import { AUTH_MOUNT_PATTERN } from "./mount";
import { loadLoginContext, loadOidcClientSecret } from "./repo";
import { mountSignInStore, signInContext } from "./sign-in-limits";

const AUTH_URL_FIELDS = {
  role: { type: "string" },
  redirect_uri: { type: "string" },
  client_nonce: { type: "string" },
} as const;

const CALLBACK_FIELDS = {
  state: { type: "string" },
  code: { type: "string" },
  id_token: { type: "string" },
  client_nonce: { type: "string" },
} as const;

/** Vault's error prefixes (path_oidc.go), which its CLI and UI look for. */
const LOGIN_FAILED = "Vault login failed.";
const TOKEN_VERIFICATION = "Token verification failed.";
/** Vault's `code` value meaning "the code the form_post stored under this state". */
const NO_CODE = "no_code";

/** What the B21 store keeps under a state between `auth_url` and the callback. */
interface OidcState extends Record<string, string> {
  role: string;
  nonce: string;
  codeVerifier: string;
  redirectUri: string;
  clientNonce: string;
}

/**
 * The provider of a mount set up for the browser flow (Vault's OIDCFlow: discovery plus a
 * client id and secret), or null. Unlike Vault, the same mount also serves JWT login.
 */
function flowProvider(config: JwtConfig): OidcProvider | null {
  if (!config.discovered || config.oidc_client_id === "" || !config.has_client_secret) return null;
  return {
    issuer: config.discovered.issuer,
    authorizationEndpoint: config.discovered.authorizationEndpoint,
    tokenEndpoint: config.discovered.tokenEndpoint,
    userinfoEndpoint: config.discovered.userinfoEndpoint,
  };
}

async function authUrl(req: VaultRequest): Promise<Response> {
  const f = parseFields(req.body, AUTH_URL_FIELDS);
  const warnings = unknownFieldWarnings(f.unknown);
  // S25: the role named is lower-cased (Vault's TypeLowerCaseString).
  const requested = String(f.values.role).toLowerCase();
  const { mount, config, role } = await signInContext(req, requested);
  if (!config) throw badRequest("could not load configuration");
  const provider = flowProvider(config);
  if (!provider) throw badRequest("OIDC login is not configured for this mount");
  const roleName = requested || config.default_role;
  if (!roleName) throw badRequest("missing role");
  const redirectUri = String(f.values.redirect_uri);
  if (!redirectUri) throw badRequest("missing redirect_uri");
  if (!role) throw badRequest(`role "${roleName}" could not be found`);

  const empty = () => vaultJson(req, { data: { auth_url: "" }, warnings });
  if (!redirectAllowed(redirectUri, role.allowed_redirect_uris)) {
    logWarn(req.requestId, "oidc auth_url: unauthorized redirect_uri", { mount: mount.path, role: roleName });
    return empty();
  }
  // Vault: in form_post mode a UI redirect goes straight to the API path instead.
  const formPost = config.oidc_response_mode === "form_post";
  const effectiveRedirect = formPost ? redirectUri.replace("ui/vault", "v1") : redirectUri;
  const state = newSignInState();
  const started = await startAuthorization(provider, {
    clientId: config.oidc_client_id,
    redirectUri: effectiveRedirect,
    state,
    scopes: role.oidc_scopes,
    maxAge: role.max_age,
    formPost,
  });
  const record: OidcState = {
    role: roleName,
    nonce: started.nonce,
    codeVerifier: started.codeVerifier,
    redirectUri: effectiveRedirect,
    clientNonce: String(f.values.client_nonce),
  };
  const stored = await mountSignInStore(req.env, mount).put(state, record, MAX_STATE_TTL_MS);
  if (!stored.ok) {
    // S28: past 10,000 outstanding states (or an unstorable one) the answer stays vague.
    logWarn(req.requestId, "oidc auth_url: state not stored", { mount: mount.path, reason: stored.error });
    return empty();
  }
  return vaultJson(req, { data: { auth_url: started.url }, warnings });
}

async function callback(req: VaultRequest): Promise<Response> {
  const { mount, config } = await signInContext(req, "");
  if (!config) throw badRequest(`${LOGIN_FAILED} Could not load configuration`);

  const consumed = await mountSignInStore(req.env, mount).consume(req.query.get("state") ?? "");
  if (!consumed.ok) throw badRequest(`${LOGIN_FAILED} Expired or missing OAuth state.`);
  // Only auth_url below puts records in a mount's store.
  const state = consumed.value.record as OidcState;
  // A client_nonce given to auth_url must come back, equal, with the callback.
  if (state.clientNonce !== "" && (req.query.get("client_nonce") ?? "") !== state.clientNonce) {
    throw badRequest("invalid client_nonce");
  }
  const roleContext = await loadLoginContext(req.db, mount.path, state.role);
  const role = roleContext?.mount.accessor === mount.accessor ? roleContext.role : null;
  if (!role) throw badRequest(`${LOGIN_FAILED} Role could not be found`);
  assertClientAllowed(role, req.headers);
  const provider = flowProvider(config);
  if (!config.discovered || !provider) throw badRequest("OIDC login is not configured for this mount");

  let code = req.query.get("code") ?? "";
  if (code === NO_CODE) code = consumed.value.code ?? "";
  if (code === "") throw badRequest(`${LOGIN_FAILED} No code or id_token received.`);
  const clientSecret = await loadOidcClientSecret(req.env, req.db, mount.accessor);
  if (!clientSecret) throw badRequest("OIDC login is not configured for this mount");

  const jwksUri = config.discovered.jwksUri;
  let claims: Claims;
  let accessToken: string;
  try {
    const exchanged = await exchangeCode(provider, {
      clientId: config.oidc_client_id,
      clientSecret,
      code,
      redirectUri: state.redirectUri,
      codeVerifier: state.codeVerifier,
      nonce: state.nonce,
      maxAge: role.max_age,
      // oauth4webapi's own exp / nbf / auth_time checks allow the role's clock skew (0 = 60 s,
      // negative = none), as Vault's do; the leeways proper are applied below.
      clockToleranceSeconds: role.clock_skew_leeway < 0 ? 0 : role.clock_skew_leeway || 60,
      algorithms: config.jwt_supported_algs.length > 0 ? config.jwt_supported_algs : [...DEFAULT_SUPPORTED_ALGS],
      verifySignature: async (idToken) => {
        if (idToken.length > MAX_JWT_BYTES) throw new Error("token too large");
        await verifySignature(idToken, { kind: "remote", urls: [jwksUri] });
      },
    });
    claims = exchanged.claims;
    accessToken = exchanged.accessToken;
  } catch (err) {
    if (!(err instanceof OidcCallbackError)) throw err;
    if (err.kind === "exchange") throw badRequest(`${LOGIN_FAILED} Error exchanging oidc code: "${err.message}".`);
    if (err.kind === "no_id_token") throw badRequest(`${TOKEN_VERIFICATION} No id_token found in response.`);
    if (/nonce/.test(err.message)) throw badRequest(`${TOKEN_VERIFICATION} Invalid ID token nonce.`);
    throw badRequest(`${TOKEN_VERIFICATION} ${err.message}`);
  }
  if (role.bound_subject !== "" && claims.sub !== role.bound_subject) {
    throw badRequest(`${TOKEN_VERIFICATION} sub claim does not match bound subject`);
  }
  checkRegisteredClaims(claims, role, { issuer: config.discovered.issuer, subject: "" }, TOKEN_VERIFICATION);
  delete claims.nonce;
  // Vault merges /userinfo into the claims; a failure is logged and the sign-in goes on.
  const merged = await mergeUserinfo(provider, config.oidc_client_id, accessToken, claims);
  if (merged.problem !== null) {
    logWarn(req.requestId, "error reading /userinfo endpoint", { mount: mount.path, error: merged.problem });
  }
  return completeLogin(req, mount, state.role, role, merged.claims);
}

async function callbackPost(req: VaultRequest): Promise<Response> {
  const { mount, config } = await signInContext(req, "");
  if (!config) throw badRequest(`${LOGIN_FAILED} Could not load configuration.`);
  // Vault answers 405 unless the mount is configured for form_post.
  if (config.oidc_response_mode !== "form_post") throw unsupportedOperation();
  const f = parseFields(req.body, CALLBACK_FIELDS);
  const state = String(f.values.state);
  const code = String(f.values.code);
  const attached = code === "" ? null : await mountSignInStore(req.env, mount).attachCode(state, code);
  if (attached !== null && !attached.ok) {
    return htmlPage(400, `${LOGIN_FAILED} Expired or missing OAuth state.`, null);
  }
  const next = new URLSearchParams({ state, code: NO_CODE });
  return htmlPage(200, "Completing the sign-in process…", `/v1/auth/${mount.path}/oidc/callback?${next}`);
}

/**
 * A small HTML page (Vault answers the form_post callback with one). With `next`, it moves
 * to that same-origin URL at once (a meta refresh, so no script is needed). No caching, no
 * referrer: the URL carries the state.
 */
function htmlPage(status: 200 | 400, message: string, next: string | null): Response {
  const escapeText = (text: string) =>
    text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
  const refresh = next === null ? "" : `<meta http-equiv="refresh" content="0;url=${escapeText(next)}">`;
  const link = next === null ? "" : `<p><a href="${escapeText(next)}">Continue</a></p>`;
  const body = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Keyway sign-in</title>${refresh}</head>
<body><p>${escapeText(message)}</p>${link}</body></html>
`;
  return new Response(body, {
    status,
    headers: {
      "Content-Type": "text/html; charset=utf-8",
      "Cache-Control": "no-store",
      "Referrer-Policy": "no-referrer",
      "Content-Security-Policy": "default-src 'none'",
    },
  });
}

const MOUNT_DOC = "the auth mount's path (below `auth/`), as enabled through `sys/auth`";

/** The browser flow's routes (S26), all unauthenticated (S16a as amended by S24). */
export const oidcFlowRoutes: VaultRoute[] = [
  {
    pattern: "auth/:mount/oidc/auth_url",
    params: { mount: AUTH_MOUNT_PATTERN },
    unauthenticated: ["update"],
    docs: {
      params: { mount: MOUNT_DOC },
      operations: {
        update: {
          summary:
            "Start an OIDC sign-in: the provider's authorization URL (empty when the redirect URI is not allowed)",
          body: AUTH_URL_FIELDS,
          responses: envelope("the authorization URL", object({ auth_url: str("empty when refused") })),
        },
      },
    },
    operations: { update: authUrl },
  },
  {
    pattern: "auth/:mount/oidc/callback",
    params: { mount: AUTH_MOUNT_PATTERN },
    unauthenticated: ["read", "update"],
    formBody: true,
    docs: {
      params: { mount: MOUNT_DOC },
      operations: {
        read: {
          summary: "Complete an OIDC sign-in: exchange the code, check the ID token, answer a token",
          query: {
            state: { description: "the state `auth_url` put in the authorization URL", required: true },
            code: { description: "the provider's authorization code, or `no_code` for the one a form POST stored" },
            client_nonce: { description: "the `client_nonce` given to `auth_url`, if one was" },
            id_token: { description: "ignored (Keyway asks only for the code response type)" },
          },
          responses: authEnvelope("the new token in `auth`"),
        },
        update: {
          summary: "form_post mode only: keep the posted code under its state, answer the page that re-issues the GET",
          body: CALLBACK_FIELDS,
          responses: { ...html("the page that moves to the GET callback"), ...html("unknown or expired state", "400") },
        },
      },
    },
    operations: { read: callback, update: callbackPost },
  },
];
