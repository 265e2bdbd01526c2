/**
 * The console's single sign-on (decision N16): the start and the callback of an
 * organization's OpenID Connect sign-in, and who the person is once the provider has said.
 *
 * - `POST /app/~/sso/:org/start` carries the sign-in form's CSRF token (N14's double submit
 *   on the pre-session cookie); `POST /app/~/sso/start` is the same with the organization
 *   named in the form's `organization` field (an unknown organization and one without SSO
 *   get the same refusal). It sets `__Host-keyway_sso` (`SameSite=Lax`, 10 minutes) and
 *   keeps in the organization's B21 store (scope `nocode:<org>`), under a fresh state, the
 *   HMAC of that cookie, the organization, the configuration's generation, the nonce, the
 *   PKCE verifier and the checked `return` path; then the browser goes to the provider.
 * - `GET /app/~/sso/:org/callback` requires that cookie, consumes the state (read and
 *   deleted in one call), deletes the cookie, exchanges the code, checks the ID token and
 *   merges `/userinfo` (src/lib/oidc), links or provisions the user, applies team-sync,
 *   opens a session scoped to the organization, and answers 200 with a page that moves to
 *   the stored return path when it lies in that organization or under `/app/settings/`, else
 *   to `/app/<org>`, by a same-site navigation, so the `SameSite=Strict` session cookie is sent.
 *
 * Every refusal is a page that says what happened (never a 5xx): SSO not enabled, a
 * missing or foreign cookie, a state used already or expired, a provider error, an
 * unverified email, an unknown email without auto-provision, too many groups.
 */
import type { Context } from "hono";
import { html } from "hono/html";
import { isUniqueViolation } from "../../db/unique";
import { presentedValuesEqual } from "../../lib/crypto/hmac";
import { logWarn } from "../../lib/log";
import { DEFAULT_SUPPORTED_ALGS, MAX_JWT_BYTES, verifySignature } from "../../lib/oidc/keys";
import {
  exchangeCode,
  mergeUserinfo,
  OidcCallbackError,
  type OidcProvider,
  startAuthorization,
} from "../../lib/oidc/relying-party";
import { clientAddressKey, newSignInState, signInStore } from "../../platform/sign-in";
import { MAX_STATE_TTL_MS } from "../../platform/sign-in-store";
import { waitUntilOf } from "../access/auth";
import {
  clearConsoleCookie,
  newSsoBinding,
  openSsoSession,
  setConsoleCookie,
  signInCsrfMatches,
  ssoBindingOf,
} from "../browser/console-session";
import { messageAnswer } from "../browser/message-page";
import { type Markup, pageHead } from "../browser/page-head";
import { clearNocodeCache } from "../cache";
import type { NocodeEnv } from "../env";
import {
  clientSecretOf,
  discoveredOf,
  findSsoConfiguration,
  findTeamByName,
  freeUsername,
  isMember,
  linkedUser,
  linkIdentity,
  provisionUser,
  type SsoConfigurationRow,
  syncTeams,
  usersWithEmail,
} from "../sso/repo";
import { ssoRedirectUri } from "../sso/serialize";
import { assetTags, consoleFrame, orgPath } from "./pages";
import { consoleReturnPath } from "./return-path";

/** Any console context: /api/v2's environment, with the D1 handle set. */
type Ctx<E extends NocodeEnv = NocodeEnv> = Context<E>;

/** N16: at most this many groups claim values, each at most this long. */
export const MAX_GROUPS = 1000;
export const MAX_GROUP_LENGTH = 256;
/** What of a provider's `error_description` a refusal page shows. */
const MAX_PROVIDER_TEXT = 300;

/** What the B21 store keeps under a state between the start and the callback. */
interface SsoState extends Record<string, string> {
  /** HMAC of the browser's `__Host-keyway_sso` cookie. */
  binding: string;
  organization: string;
  generation: string;
  nonce: string;
  codeVerifier: string;
  redirectUri: string;
  /** Where the callback lands (N16): a path {@link consoleReturnPath} accepted at the start. */
  returnTo: string;
}

const NO_STORE = { "Cache-Control": "no-store", "Referrer-Policy": "no-referrer" };

/** The provider of an enabled configuration with its client fields, or null. */
function providerOf(config: SsoConfigurationRow): (OidcProvider & { jwksUri: string }) | null {
  const discovered = discoveredOf(config);
  if (!config.enabled || !discovered || !config.clientId || !config.clientSecretEncrypted) return null;
  return {
    issuer: discovered.issuer,
    authorizationEndpoint: discovered.authorizationEndpoint,
    tokenEndpoint: discovered.tokenEndpoint,
    userinfoEndpoint: discovered.userinfoEndpoint,
    jwksUri: discovered.jwksUri,
  };
}

/** The name the sign-in button gives the provider: its issuer's host. */
export function providerLabel(config: SsoConfigurationRow): string {
  try {
    return new URL(config.issuer ?? "").host;
  } catch {
    return "your identity provider";
  }
}

/** The enabled configuration of `org` the sign-in page offers, or null. */
export async function offeredSso<E extends NocodeEnv>(
  c: Ctx<E>,
  org: string,
): Promise<{ organization: string; provider: string } | null> {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(org)) return null;
  const config = await findSsoConfiguration(c.var.db, org);
  if (!config || !providerOf(config)) return null;
  return { organization: org, provider: providerLabel(config) };
}

async function refusal<E extends NocodeEnv>(
  c: Ctx<E>,
  status: 400 | 403 | 429,
  title: string,
  text: string,
  clearCookie: boolean,
): Promise<Response> {
  if (clearCookie) clearConsoleCookie(c, "sso");
  return messageAnswer(c, consoleFrame(null), status, title, text, NO_STORE);
}

const startAgain = (org: string) => `Go to /app/${org} and sign in again.`;

/**
 * S28: count the request against the client address in the organization's store; 429
 * past 60 a minute. Checked once the organization is known to have a configuration, so
 * requests naming anything else create no counter.
 */
async function rateLimited<E extends NocodeEnv>(c: Ctx<E>, org: string): Promise<Response | null> {
  const hit = await signInStore(c.env, `nocode:${org}`).hit(clientAddressKey(c.req.raw.headers));
  if (hit.ok || hit.error !== "limited") return null;
  const res = await refusal(c, 429, "Too many sign-in attempts", "Wait a minute, then try again.", false);
  res.headers.set("Retry-After", String(hit.retryAfterSeconds));
  return res;
}

/**
 * The start of `org`'s sign-in; `org` comes from the path or, for the sign-in by
 * organization name, from the form, so it is untrusted either way.
 */
export async function ssoStart<E extends NocodeEnv>(
  c: Ctx<E>,
  org: string,
  form: Record<string, string>,
): Promise<Response> {
  const origin = c.req.header("origin");
  const url = new URL(c.req.url);
  if ((origin !== undefined && origin !== url.origin) || !(await signInCsrfMatches(c, form.csrf))) {
    return refusal(c, 403, "Refused", "This sign-in form has expired. Go back, reload the page and try again.", false);
  }
  const wellFormed = /^[A-Za-z0-9_-]{1,64}$/.test(org);
  const config = wellFormed ? await findSsoConfiguration(c.var.db, org) : undefined;
  const provider = config ? providerOf(config) : null;
  // The same words whether the organization exists or not: the page names no more than was typed.
  if (!config || !provider)
    return refusal(
      c,
      403,
      "Single sign-on is not enabled",
      wellFormed
        ? `The organization ${org} does not offer single sign-on.`
        : "That organization does not offer single sign-on.",
      false,
    );
  const limited = await rateLimited(c, org);
  if (limited) return limited;

  const binding = await newSsoBinding(c.env);
  const state = newSignInState();
  const redirectUri = ssoRedirectUri(url.origin, org);
  const started = await startAuthorization(provider, {
    clientId: config.clientId ?? "",
    redirectUri,
    state,
    // The email scope carries `email` and `email_verified`; the groups claim is asked for by its name.
    scopes: ["email", "profile", ...(config.groupsClaim ? [config.groupsClaim] : [])],
    maxAge: 0,
    formPost: false,
  });
  const record: SsoState = {
    binding: binding.hash,
    organization: org,
    generation: String(config.generation),
    nonce: started.nonce,
    codeVerifier: started.codeVerifier,
    redirectUri,
    returnTo: consoleReturnPath(c.req.query("return")),
  };
  const stored = await signInStore(c.env, `nocode:${org}`).put(state, record, MAX_STATE_TTL_MS);
  if (!stored.ok) {
    // S28: past 10,000 outstanding states the console says so.
    return refusal(
      c,
      429,
      "Too many sign-ins in progress",
      "Too many sign-ins are in progress for this organization. Try again in a few minutes.",
      false,
    );
  }
  // The console's CSP allows forms to post only to this origin, redirects included, so the
  // browser moves on to the provider from a page rather than by a 303.
  setConsoleCookie(c, "sso", binding.value);
  return c.html(
    movingOn(`Continue to ${providerLabel(config)}`, started.url, "Continuing to your identity provider…"),
    200,
    NO_STORE,
  );
}

/** A page that moves on to `target` at once (a meta refresh: no script), with a link for when it does not. */
function movingOn(linkText: string, target: string, message: string): Markup {
  const head = pageHead(
    "Signing in · Keyway",
    html`<meta http-equiv="refresh" content="0;url=${target}">${assetTags({ script: false })}`,
  );
  return html`${head}<body><main id="content"><h1>Signing in</h1><p>${message}</p><p><a href="${target}">${linkText}</a></p></main></body></html>`;
}

export async function ssoCallback<E extends NocodeEnv>(c: Ctx<E>): Promise<Response> {
  const org = c.req.param("org") ?? "";
  const config = /^[A-Za-z0-9_-]{1,64}$/.test(org) ? await findSsoConfiguration(c.var.db, org) : undefined;
  if (!config)
    return refusal(
      c,
      403,
      "Single sign-on is not enabled",
      `The organization ${org} does not offer single sign-on.`,
      true,
    );
  const limited = await rateLimited(c, org);
  if (limited) return limited;

  // N16: the callback must come back to the browser that started the sign-in.
  const binding = await ssoBindingOf(c);
  if (binding === null) {
    return refusal(
      c,
      400,
      "Sign-in not started in this browser",
      `This sign-in did not start in this browser, or it took longer than 10 minutes. ${startAgain(org)}`,
      true,
    );
  }
  const consumed = await signInStore(c.env, `nocode:${org}`).consume(c.req.query("state") ?? "");
  if (!consumed.ok) {
    return refusal(
      c,
      400,
      "Sign-in link already used",
      `This sign-in link was used already or has expired; each one works once. ${startAgain(org)}`,
      true,
    );
  }
  const state = consumed.value.record as SsoState;
  if (state.organization !== org || !(await presentedValuesEqual(binding, state.binding))) {
    return refusal(
      c,
      400,
      "Sign-in not started in this browser",
      `This sign-in did not start in this browser. ${startAgain(org)}`,
      true,
    );
  }
  const providerError = c.req.query("error");
  if (providerError !== undefined) {
    const description = (c.req.query("error_description") ?? "").slice(0, MAX_PROVIDER_TEXT);
    return refusal(
      c,
      400,
      "The identity provider refused the sign-in",
      `It answered ${providerError.slice(0, 100)}${description ? `: ${description}` : ""}. ${startAgain(org)}`,
      true,
    );
  }
  const provider = providerOf(config);
  if (!provider || String(config.generation) !== state.generation) {
    return refusal(
      c,
      403,
      "Single sign-on is not enabled",
      `Single sign-on of ${org} was turned off or changed while you were signing in. ${startAgain(org)}`,
      true,
    );
  }
  const clientSecret = await clientSecretOf(c.env, config, waitUntilOf(c));
  const code = c.req.query("code") ?? "";
  if (!clientSecret || code === "") {
    return refusal(c, 400, "The identity provider sent no code", startAgain(org), true);
  }

  let claims: Record<string, unknown>;
  try {
    const exchanged = await exchangeCode(provider, {
      clientId: config.clientId ?? "",
      clientSecret,
      code,
      redirectUri: state.redirectUri,
      codeVerifier: state.codeVerifier,
      nonce: state.nonce,
      maxAge: 0,
      clockToleranceSeconds: 60,
      // The signature algorithms a JWT/OIDC mount accepts by default (S25).
      algorithms: [...DEFAULT_SUPPORTED_ALGS],
      verifySignature: async (idToken) => {
        if (idToken.length > MAX_JWT_BYTES) throw new Error("token too large");
        await verifySignature(idToken, { kind: "remote", urls: [provider.jwksUri] });
      },
    });
    const merged = await mergeUserinfo(provider, config.clientId ?? "", exchanged.accessToken, exchanged.claims);
    if (merged.problem !== null)
      logWarn(c.var.requestId ?? "", "sso: error reading /userinfo", { organization: org, error: merged.problem });
    claims = merged.claims;
  } catch (err) {
    if (!(err instanceof OidcCallbackError)) throw err;
    logWarn(c.var.requestId ?? "", "sso: callback refused", { organization: org, kind: err.kind, error: err.message });
    return refusal(
      c,
      400,
      "The identity provider's answer was refused",
      `The sign-in could not be completed (${err.kind === "verification" ? "the ID token did not pass its checks" : "the code could not be exchanged"}). ${startAgain(org)}`,
      true,
    );
  }

  const outcome = await whoSignedIn(c, config, provider.issuer, claims);
  if ("refused" in outcome) return refusal(c, 403, outcome.refused.title, outcome.refused.text, true);

  const id = await openSsoSession(c.env, { userId: outcome.userId, organization: org, generation: config.generation });
  const target = landingPath(org, state.returnTo);
  const page = movingOn(
    target === orgPath(org) ? `Continue to ${org}` : "Continue",
    target,
    `You are signed in to ${org}.`,
  );
  setConsoleCookie(c, "session", id);
  clearConsoleCookie(c, "sso");
  return c.html(page, 200, NO_STORE);
}

/**
 * Where a session of `org` lands (N16): the stored return path, checked again, when it is in
 * `org` or under `/app/settings/` (`settings` is a reserved organization name); any other
 * organization's pages would answer 404 to this session, so those, and `/app`, land on `org`.
 */
function landingPath(org: string, returnTo: string | undefined): string {
  const home = orgPath(org);
  const path = consoleReturnPath(returnTo);
  if (path !== returnTo) return home;
  const first = /^\/app\/([^/?]+)/.exec(path)?.[1];
  return first === org || first === "settings" ? path : home;
}

type Identity = { userId: string } | { refused: { title: string; text: string } };

/**
 * N16's "who you are": the linked identity (issuer, `sub`); else an existing member with
 * that verified, unique email; else, with auto-provision, a new user in `default-team`;
 * then team-sync by the groups claim. The person must end up in a team of the organization.
 */
async function whoSignedIn<E extends NocodeEnv>(
  c: Ctx<E>,
  config: SsoConfigurationRow,
  issuer: string,
  claims: Record<string, unknown>,
): Promise<Identity> {
  const db = c.var.db;
  const org = config.organization;
  const refuse = (title: string, text: string): Identity => ({ refused: { title, text } });
  const subject = typeof claims.sub === "string" ? claims.sub : "";
  if (subject === "" || subject.length > 255)
    return refuse("Sign-in refused", "The identity provider sent no usable subject.");

  // N16, S27's bounds: the groups claim is checked before anything is written.
  let groups: string[] | null = null;
  if (config.teamSync && config.groupsClaim !== null && config.groupsClaim in claims) {
    const raw = claims[config.groupsClaim];
    const values = typeof raw === "string" ? [raw] : raw;
    if (!Array.isArray(values) || values.some((g) => typeof g !== "string"))
      return refuse("Sign-in refused", `The ${config.groupsClaim} claim is not a list of group names.`);
    if (values.length > MAX_GROUPS || values.some((g: string) => g.length > MAX_GROUP_LENGTH))
      return refuse(
        "Sign-in refused",
        `The ${config.groupsClaim} claim has more than ${MAX_GROUPS} values or a value longer than ${MAX_GROUP_LENGTH} characters.`,
      );
    groups = values as string[];
  }

  let user = await linkedUser(db, org, issuer, subject);
  if (!user) {
    const email = typeof claims.email === "string" ? claims.email.trim() : "";
    if (claims.email_verified !== true || email === "" || email.length > 320 || !email.includes("@")) {
      return refuse(
        "Email address not verified",
        "Your identity provider did not confirm your email address, so it cannot be matched to a Keyway user. Verify it with your provider, then sign in again.",
      );
    }
    const matches = await usersWithEmail(db, email);
    if (matches.length === 1 && (await isMember(db, org, matches[0]!.id))) {
      user = matches[0]!;
      await linkIdentity(db, org, issuer, subject, user.id);
    } else if (matches.length === 0 && config.autoProvision && config.defaultTeam !== null) {
      const team = await findTeamByName(db, org, config.defaultTeam);
      if (!team)
        return refuse(
          "Sign-in refused",
          `The default team of ${org} no longer exists. Ask an owner to fix the SSO configuration.`,
        );
      try {
        user = await provisionUser(db, {
          organization: org,
          issuer,
          subject,
          username: await freeUsername(db, email),
          email,
          teamId: team.id,
        });
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
        // A concurrent sign-in of the same identity (or a username taken meanwhile): its result stands.
        const raced = await linkedUser(db, org, issuer, subject);
        if (!raced)
          return refuse("Sign-in refused", `Your account is being set up by another sign-in. ${startAgain(org)}`);
        user = raced;
      }
      clearNocodeCache();
    } else {
      return refuse(
        "No Keyway user for this email",
        matches.length > 1
          ? "More than one Keyway user has your email address, so it cannot be matched. Ask an owner of the organization for help."
          : `No member of ${org} has your email address. Ask an owner of the organization to add you.`,
      );
    }
  }
  if (groups !== null && (await syncTeams(db, org, user.id, groups))) clearNocodeCache();
  if (!(await isMember(db, org, user.id))) {
    return refuse("Not a member", `You are not in any team of ${org}. Ask an owner of the organization to add you.`);
  }
  return { userId: user.id };
}
