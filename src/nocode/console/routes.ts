/**
 * The self-service console under `/app` (decision N14): server-rendered pages
 * for people, over the same services as the API (E4 provisioning, E5/E7 upgrades, the N7
 * run actions) and exactly N10's permissions (a page the caller may not see is 404).
 *
 * Paths (`~` cannot start an organization name, so the console's own pages never hide one):
 * - `/app/~/sign-in` (GET form, POST), `/app/~/sign-out` (POST), `/app/~/console.<hash>.css|js`
 *   (./assets.ts: the hash of the asset's bytes is part of its URL);
 * - `/app/~/sso/:org/start` (POST) and `/app/~/sso/:org/callback` (GET): an organization's
 *   single sign-on (N16, ./sso.ts), and `/app/~/sso/start` (POST), its start by organization name;
 * - `/app` the caller's organizations; `/app/:org` its no-code catalog and workspaces;
 * - `/app/:org/modules/:id` (manage-workspaces) the module's workspaces and versions,
 *   `…/provision` the form generated from the pinned version (GET, POST → E4),
 *   `…/rollouts` (POST → N15's create); `/app/:org/rollouts/:id` a rollout's items and
 *   `…/actions/confirm|pause|resume|cancel` (POST, N15);
 * - `/app/:org/workspaces/:name` the workspace; `…/upgrade` (POST → E5), `…/upgrade/:run`
 *   the review, `…/upgrade/:run/confirm` (POST → E7); `…/runs/:run/actions/apply|discard`
 *   and `…/runs/:run/actions/cancel` (POST, N19a);
 *   `…/runs/:run` is the plan page (src/nocode/plan-page), which opens with the session too.
 *
 * Every page answers with a Content-Security-Policy that allows no inline script or
 * style; every POST needs the session's CSRF token (403 without it) and a same-origin
 * `Origin` when the browser sends one.
 */
import { type Context, Hono } from "hono";
import { secureHeaders } from "hono/secure-headers";
import { createDb, type Db } from "../../db/client";
import { BodyError, readLimitedText } from "../../lib/http/body";
import { logError } from "../../lib/log";
import { authenticateNocode } from "../access/auth";
import {
  type ConsoleSession,
  clearConsoleCookie,
  csrfMatches,
  currentSession,
  endSession,
  mayOpenSession,
  openSession,
  setConsoleCookie,
  signInChallenge,
  signInCsrfMatches,
} from "../browser/console-session";
import { messageAnswer } from "../browser/message-page";
import type { Markup } from "../browser/page-head";
import { clearNocodeCacheAfterWrite } from "../cache";
import type { NocodeEnv } from "../env";
import { NocodeError, notFound } from "../errors";
import { cachedNoCodeModuleWithOptions } from "../no-code-modules/cached";
import { findNoCodeModule, listVariableOptions } from "../no-code-modules/repo";
import { loadEnginePlan } from "../plan-page/engine-plan";
import { loadPlanPageModel } from "../plan-page/load";
import { findModuleVersion, versionStatusesOf, versionSummary } from "../registry/repo";
import { notifyRolloutOfRun } from "../rollout-hooks";
import { readRolloutDocument } from "../rollouts/input";
import { listModuleRollouts } from "../rollouts/repo";
import { createRollout, type RolloutAction, readRollout, rolloutAction, rolloutModule } from "../rollouts/service";
import { rights } from "../route-rights";
import { cancelRun } from "../runs/cancel";
import { confirmRun, discardRun } from "../runs/create";
import { findRun, listWorkspaceRuns } from "../runs/repo";
import { findTeam } from "../teams/repo";
import {
  findTokenById,
  issueToken,
  listUserTokens,
  revokeTokenById,
  TOKEN_DESCRIPTION_MAX,
} from "../tokens/api-tokens";
import { confirmUpgrade } from "../upgrade/confirm";
import { defaultUpgradeDeps } from "../upgrade/deps";
import { initiateUpgrade } from "../upgrade/initiate";
import { NO_UPGRADE_INPUT } from "../upgrade/input";
import { findUpgradeTarget } from "../upgrade/target";
import { provisionWorkspace } from "../workspaces/create";
import { readWorkspaceDocument } from "../workspaces/input";
import { noCodeUpgradeAvailable } from "../workspaces/load";
import { findWorkspaceByName, listWorkspaceVars, type WorkspaceRow } from "../workspaces/repo";
import { consoleAsset } from "./assets";
import { type FormValues, formErrors, formFields, provisionDocument } from "./form";
import {
  consoleFrame,
  modulePage,
  organizationPage,
  organizationsPage,
  provisionPage,
  reviewPath,
  rolloutPage,
  rolloutPath,
  signInPage,
  upgradePendingPage,
  upgradeReviewPage,
  type Viewer,
  workspacePage,
  workspacePath,
} from "./pages";
import { type CatalogEntry, callerOrganizations, catalog, workspacesOfModule, workspacesOfOrganization } from "./repo";
import { consoleReturnPath, DEFAULT_RETURN } from "./return-path";
import { offeredSso, ssoCallback, ssoStart } from "./sso";
import { DEFAULT_EXPIRY, expiryFor, type TokenRules, tokenRules } from "./tokens";
import {
  signInAgainPage,
  TERRAFORM_LOGIN_DESCRIPTION,
  TOKEN_NOTICES,
  TOKENS_PATH,
  teamSessionPage,
  tokenCreatedPage,
  tokensPage,
} from "./tokens-pages";

/** /api/v2's environment (the session's caller and one D1 handle, so `rights(…)` works here too) plus the page's viewer and form. */
type ConsoleEnv = NocodeEnv & { Variables: NocodeEnv["Variables"] & { viewer: Viewer; form: FormValues } };
type Ctx = Context<ConsoleEnv>;

/**
 * N14's security headers on every console answer (Hono's secure-headers middleware): no
 * inline script or style, only our own assets, forms post only to us, never framed.
 * Referrer-Policy is `same-origin`, not `no-referrer`: with the latter Chromium sends
 * `Origin: null` on form posts, and the CSRF defence checks Origin (console URLs carry no
 * secret, unlike the plan page's view token). Strict-Transport-Security is left to the
 * deployment (its includeSubDomains reaches beyond this Worker).
 */
const consoleSecurityHeaders = secureHeaders({
  contentSecurityPolicy: {
    defaultSrc: ["'none'"],
    scriptSrc: ["'self'"],
    styleSrc: ["'self'"],
    imgSrc: ["'self'"],
    connectSrc: ["'self'"],
    formAction: ["'self'"],
    baseUri: ["'none'"],
    frameAncestors: ["'none'"],
  },
  referrerPolicy: "same-origin",
  xContentTypeOptions: "nosniff",
  xFrameOptions: "DENY",
  strictTransportSecurity: false,
});

/** Pages and redirects are never cached (the assets are, see their routes). */
const NO_STORE = { "Cache-Control": "no-store" };

/** Largest form body accepted (the provision form of a module with many variables fits easily). */
const MAX_FORM_BYTES = 256 * 1024;

/** What a token can look like (B19): 1–512 printable ASCII characters, no space. */
const SIGN_IN_TOKEN = /^[\x21-\x7e]{1,512}$/;

/** Paths that need no session: the sign-in page, and the assets (any `console.*`, so an unknown one is a plain 404). */
const PUBLIC_PATHS = new Set(["/app/~/sign-in"]);
const ASSET_PATH = /^\/app\/~\/console\.[^/]*$/;
/** N16: an organization's SSO start and callback need no session either. */
const SSO_PATH = /^\/app\/~\/sso\/(?:[^/]+\/(?:start|callback)|start)$/;

/** Fixed notices a redirect may ask a page to show (never text from the query string). */
const NOTICES: Record<string, string> = {
  created: "Workspace created, and its first run queued.",
  applied: "Apply queued.",
  discarded: "Run discarded.",
  canceled: "Run canceled.",
  signalled: "Cancel asked: the agent running the run interrupts its engine and ends the run as canceled.",
  upgraded: "Upgrade confirmed: the workspace now runs the new version and the apply is queued.",
  "no-upgrade": "Nothing to upgrade: the workspace already runs the pinned version with the module's options.",
};

export const consoleApp = new Hono<ConsoleEnv>();

consoleApp.onError((err, c) => {
  if (err instanceof NocodeError) {
    if (err.code === "not_found") return notFoundPage(c);
    if (err.code === "conflict") return message(c, 409, "Not possible right now", err.detail ?? "Conflict.");
    if (err.code === "unprocessable" || err.code === "invalid_attribute" || err.code === "bad_request") {
      return message(
        c,
        err.code === "bad_request" ? 400 : 422,
        "Not possible",
        err.detail ?? "The request was refused.",
      );
    }
  }
  if (err instanceof BodyError)
    return message(c, 413, "Request too large", "The form was larger than this page accepts.");
  logError(String(c.var.requestId ?? ""), "internal error in the console", err);
  return message(c, 500, "Something went wrong", "Try again later.");
});

function page(c: Ctx, markup: Markup, status: 200 | 401 | 403 | 422 = 200) {
  return c.html(markup, status, NO_STORE);
}

/** A message page (../message-page.ts) in the console's layout, for the signed-in viewer when there is one. */
function message(c: Ctx, status: 400 | 401 | 403 | 404 | 409 | 413 | 422 | 500, title: string, text: string) {
  return messageAnswer(c, consoleFrame(c.var.viewer ?? null), status, title, text);
}

const notFoundPage = (c: Ctx) => message(c, 404, "Not found", "There is no such page, or you may not see it.");

/** A 303 to `path`, with the cookies the request set (Hono's context carries them). */
function seeOther(c: Ctx, path: string): Response {
  return c.body(null, 303, { ...NO_STORE, Location: path });
}

/**
 * Where sign-in returns to (N16): the `return` query parameter (`next`, its earlier name,
 * is still read), checked by {@link consoleReturnPath}.
 */
function returnPath(c: Ctx): string {
  return consoleReturnPath(c.req.query("return") ?? c.req.query("next"));
}

/** The sign-in page, returning to `path` afterwards. */
function signInPath(path: string): string {
  return path === DEFAULT_RETURN ? "/app/~/sign-in" : `/app/~/sign-in?return=${encodeURIComponent(path)}`;
}

async function readForm(request: Request): Promise<FormValues> {
  const type = request.headers.get("content-type") ?? "";
  if (!type.toLowerCase().startsWith("application/x-www-form-urlencoded")) return {};
  const text = await readLimitedText(request, MAX_FORM_BYTES);
  const out: FormValues = {};
  for (const [k, v] of new URLSearchParams(text)) if (!(k in out)) out[k] = v;
  return out;
}

/** When the browser says where a POST comes from, it must be this origin. */
function sameOrigin(request: Request): boolean {
  const origin = request.headers.get("origin");
  return origin === null || origin === new URL(request.url).origin;
}

async function viewerLabel(db: Db, session: ConsoleSession): Promise<string> {
  if (session.caller.kind === "user") return session.caller.username;
  const team = await findTeam(db, session.caller.teamId);
  return `team ${team?.name ?? session.caller.teamId} of ${session.caller.organization}`;
}

// Headers on everything (the plan page's route, registered first on /app, answers before
// this runs).
consoleApp.use("*", consoleSecurityHeaders);

// The assets, at the URLs that carry their hashes (./assets.ts): any other `console.*` is 404.
consoleApp.get("/~/:file{console\\.[^/]*}", async (c) => {
  const asset = await consoleAsset(c.req.param("file"));
  if (!asset) return notFoundPage(c);
  return c.body(asset.body, 200, { "Content-Type": asset.contentType, "Cache-Control": "public, max-age=86400" });
});

// Session and CSRF, before every other console route.
consoleApp.use("*", async (c, next) => {
  if (PUBLIC_PATHS.has(c.req.path) || ASSET_PATH.test(c.req.path) || SSO_PATH.test(c.req.path)) return next();
  const session = await currentSession(c);
  if (!session) {
    if (c.req.method === "GET" || c.req.method === "HEAD")
      return seeOther(c, signInPath(consoleReturnPath(c.req.path + new URL(c.req.url).search)));
    return message(c, 401, "Signed out", "Your session has ended. Sign in again.");
  }
  const db = createDb(c.env.DB);
  c.set("caller", session.caller);
  c.set("db", db);
  c.set("viewer", { session, label: await viewerLabel(db, session) });
  if (c.req.method !== "GET" && c.req.method !== "HEAD") {
    const form = await readForm(c.req.raw);
    if (!sameOrigin(c.req.raw) || !(await csrfMatches(session, form.csrf))) {
      return message(
        c,
        403,
        "Refused",
        "This form has expired or did not come from this site. Go back, reload the page and try again.",
      );
    }
    c.set("form", form);
    // The API's cache rule (src/nocode/cache.ts): a write clears this isolate's cache of
    // tokens and rights after it ran, so the person sees their change at once. B18: only
    // here, once the session and its CSRF token are checked, and not when the write was
    // refused; a POST without a session (sign-in included) never clears it.
    await next();
    clearNocodeCacheAfterWrite(c.res.status);
    return;
  }
  await next();
});

/** N16: the organization whose single sign-on the sign-in page offers: the one the return path leads to. */
async function ssoOffer(c: Ctx, next: string) {
  const org = /^\/app\/([^/~?][^/?]*)/.exec(next)?.[1];
  if (!org) return null;
  let name: string;
  try {
    name = decodeURIComponent(org);
  } catch {
    return null; // a malformed escape names no organization
  }
  c.set("db", createDb(c.env.DB));
  return offeredSso(c, name);
}

consoleApp.get("/~/sign-in", async (c) => {
  if (await currentSession(c)) return seeOther(c, returnPath(c));
  const csrf = await signInChallenge(c);
  const next = returnPath(c);
  return page(c, signInPage(csrf, null, next, await ssoOffer(c, next)));
});

consoleApp.post("/~/sign-in", async (c) => {
  const form = await readForm(c.req.raw);
  const csrf = await signInChallenge(c);
  const again = (status: 401 | 403, error: string) => page(c, signInPage(csrf, error, returnPath(c)), status);
  if (!sameOrigin(c.req.raw) || !(await signInCsrfMatches(c, form.csrf))) {
    return again(403, "This sign-in form has expired. Enter your token again.");
  }
  const token = (form.token ?? "").trim();
  // B19: a token is printable ASCII without spaces; anything else (a newline, a control
  // character, a non-ASCII letter) is not a token, and could not even travel in a header.
  if (!SIGN_IN_TOKEN.test(token))
    return again(401, "This is not a valid token: a token has no spaces, line breaks or control characters.");
  // The API's own token check (N13's lifecycle rules included).
  const caller = await authenticateNocode(c.env, new Headers({ Authorization: `Bearer ${token}` }));
  if (!caller) return again(401, "This token is not valid. It may be mistyped, revoked or expired.");
  if (!mayOpenSession(caller))
    return again(401, "Only user and team tokens can sign in. Organization tokens and the admin token cannot.");
  setConsoleCookie(c, "session", await openSession(c.env, token));
  clearConsoleCookie(c, "signIn");
  return seeOther(c, returnPath(c));
});

// N16: an organization's single sign-on (./sso.ts); neither needs a session.
consoleApp.post("/~/sso/start", async (c) => {
  c.set("db", createDb(c.env.DB));
  const form = await readForm(c.req.raw);
  return ssoStart(c, (form.organization ?? "").trim(), form);
});
consoleApp.post("/~/sso/:org/start", async (c) => {
  c.set("db", createDb(c.env.DB));
  return ssoStart(c, c.req.param("org"), await readForm(c.req.raw));
});
consoleApp.get("/~/sso/:org/callback", async (c) => {
  c.set("db", createDb(c.env.DB));
  return ssoCallback(c);
});

// Sign-out may name where the next sign-in returns to ("sign in again" on the tokens page).
consoleApp.post("/~/sign-out", async (c) => {
  await endSession(c);
  return seeOther(c, signInPath(returnPath(c)));
});

// N16 personal tokens: `/app/settings/tokens` (HCP's path, which `terraform login` opens).
// `settings` is a reserved organization name, so these never hide an organization's pages.
consoleApp.get("/settings", (c) => seeOther(c, TOKENS_PATH));

/** `terraform-login` when `terraform login` opened the page; any other value is ignored. */
function tokenSource(value: string | undefined): "terraform-login" | null {
  return value === "terraform-login" ? value : null;
}

/** The tokens page's own path (with its `source`), where "sign in again" returns to. */
function tokensReturnPath(source: string | null): string {
  return source ? `${TOKENS_PATH}?source=${source}` : TOKENS_PATH;
}

/** The user's rules on the tokens page, or the refusal page for a team session (N16). */
async function userTokenRules(
  c: Ctx,
  source: string | null,
): Promise<Extract<TokenRules, { kind: "user" }> | Response> {
  const rules = tokenRules(c.var.viewer.session, Date.now());
  if (rules.kind === "team") return page(c, teamSessionPage(c.var.viewer, tokensReturnPath(source)), 403);
  return rules;
}

const TOKENS_PAGE_SIZE = 50;

async function renderTokensPage(
  c: Ctx,
  rules: Extract<TokenRules, { kind: "user" }>,
  source: string | null,
  form: { description: string; expiry: string; error: string | null },
  status: 200 | 422 = 200,
) {
  const pageParam = c.req.query("page") ?? "1";
  const pageNumber = /^[1-9]\d{0,5}$/.test(pageParam) ? Number(pageParam) : 1;
  const { rows, total } = await listUserTokens(c.var.db, rules.userId, {
    offset: (pageNumber - 1) * TOKENS_PAGE_SIZE,
    size: TOKENS_PAGE_SIZE,
  });
  return page(
    c,
    tokensPage(
      c.var.viewer,
      { rows, total, page: pageNumber, pageSize: TOKENS_PAGE_SIZE },
      { choices: rules.choices, mayCreate: rules.mayCreate, ...form },
      { source, notice: TOKEN_NOTICES[c.req.query("notice") ?? ""] ?? null, now: Date.now() },
    ),
    status,
  );
}

consoleApp.get("/settings/tokens", async (c) => {
  const source = tokenSource(c.req.query("source"));
  const rules = await userTokenRules(c, source);
  if (rules instanceof Response) return rules;
  return renderTokensPage(c, rules, source, {
    description: source === "terraform-login" ? TERRAFORM_LOGIN_DESCRIPTION : "",
    expiry: DEFAULT_EXPIRY,
    error: null,
  });
});

// Create: the API's own service (N13's `issueToken`); the answer is the only place the
// token ever appears, on a page that is never stored (`no-store`) and never in a URL.
consoleApp.post("/settings/tokens", async (c) => {
  const form = c.var.form;
  const source = tokenSource(form.source);
  const rules = await userTokenRules(c, source);
  if (rules instanceof Response) return rules;
  if (!rules.mayCreate) return page(c, signInAgainPage(c.var.viewer, tokensReturnPath(source)), 403);
  const description = (form.description ?? "").trim();
  const expiry = form.expiry ?? DEFAULT_EXPIRY;
  const now = Date.now();
  const expiredAt = expiryFor(rules, expiry, now);
  const refuse = (error: string) => renderTokensPage(c, rules, source, { description, expiry, error }, 422);
  if (description === "") return refuse("Give the token a description.");
  if (description.length > TOKEN_DESCRIPTION_MAX)
    return refuse(`The description is too long (at most ${TOKEN_DESCRIPTION_MAX} characters).`);
  if (expiredAt === undefined) throw new NocodeError("unprocessable", "Choose one of the offered expirations.");
  const { token, row } = await issueToken(
    c.env,
    c.var.db,
    { kind: "user", userId: rules.userId },
    description,
    expiredAt,
  );
  return page(c, tokenCreatedPage(c.var.viewer, token, row, source, new URL(c.req.url).host));
});

// Revoke: only a token of this user (any other id is 404, as the API's `DELETE
// /authentication-tokens/:id` answers someone else). N13: the write clears this isolate's
// token cache (the middleware above), and other isolates drop it within 1 s.
consoleApp.post("/settings/tokens/:id/revoke", async (c) => {
  const rules = await userTokenRules(c, null);
  if (rules instanceof Response) return rules;
  const row = await findTokenById(c.var.db, c.req.param("id"));
  if (row?.kind !== "user" || row.subjectId !== rules.userId) throw notFound();
  if (!(await revokeTokenById(c.var.db, row.id))) throw notFound();
  return seeOther(c, `${TOKENS_PATH}?notice=revoked`);
});

consoleApp.get("/", async (c) => {
  const orgs = await callerOrganizations(createDb(c.env.DB), c.var.viewer.session.caller);
  return page(c, organizationsPage(c.var.viewer, orgs));
});

// Every page of an organization declares its rights as /api/v2's routes do (../route-rights.ts):
// the check runs before the handler, and a caller without the right gets the 404 page.
consoleApp.get("/:org", rights({ right: "member" }), async (c) => {
  const db = c.var.db;
  const org = c.req.param("org");
  const rights = c.var.orgRights;
  const [entries, workspaces] = await Promise.all([
    catalog(db, org),
    rights.has("read-workspaces") ? workspacesOfOrganization(db, org) : Promise.resolve(null),
  ]);
  return page(c, organizationPage(c.var.viewer, org, entries, workspaces, { provision: rights.has("run-workspaces") }));
});

/** The catalog entry of module `:id` of `:org` (any no-code module of it, enabled or not), or 404. */
async function moduleEntry(c: Ctx, db: Db): Promise<CatalogEntry> {
  const entries = await catalog(db, c.req.param("org") ?? "", { includeDisabled: true });
  const entry = entries.find((e) => e.module.id === c.req.param("id"));
  if (!entry) throw notFound();
  return entry;
}

consoleApp.get("/:org/modules/:id", rights({ right: "run-workspaces" }), async (c) => {
  const db = c.var.db;
  const entry = await moduleEntry(c, db);
  const [versions, workspaces, rollouts] = await Promise.all([
    versionStatusesOf(db, [entry.registryModule.id]),
    workspacesOfModule(db, entry.module.id),
    listModuleRollouts(db, entry.module.id),
  ]);
  return page(
    c,
    modulePage(
      c.var.viewer,
      c.req.param("org"),
      entry,
      versions.get(entry.registryModule.id) ?? [],
      workspaces,
      rollouts,
    ),
  );
});

// N15: start a rollout from the module page (the API's create with the form's settings).
consoleApp.post("/:org/modules/:id/rollouts", rights({ right: "run-workspaces" }), async (c) => {
  const db = c.var.db;
  const entry = await moduleEntry(c, db);
  const form = c.var.form;
  const number = (name: string) => (/^\d{1,6}$/.test(form[name] ?? "") ? Number(form[name]) : form[name]);
  const body = {
    data: {
      type: "upgrade-rollouts",
      attributes: {
        "batch-size": number("batch-size"),
        "auto-confirm": form["auto-confirm"],
        "max-failures": number("max-failures"),
      },
    },
  };
  const module = await rolloutModule(db, entry.module.id);
  const rollout = await createRollout(
    db,
    c.var.viewer.session.caller,
    module,
    readRolloutDocument(body),
    defaultUpgradeDeps(c.env),
  );
  return seeOther(c, rolloutPath(entry.module.organization, rollout.id));
});

/** The rollout `:rid` of `:org` as the API reads it (404 otherwise). */
async function rolloutOf(c: Ctx) {
  const found = await readRollout(c.var.db, c.req.param("rid") ?? "");
  if (found.rollout.organization !== c.req.param("org")) throw notFound();
  return found;
}

consoleApp.get("/:org/rollouts/:rid", rights({ right: "run-workspaces" }), async (c) => {
  const { rollout, items } = await rolloutOf(c);
  const db = createDb(c.env.DB);
  const names = new Map((await workspacesOfModule(db, rollout.noCodeModuleId)).map((w) => [w.id, w.name] as const));
  const entry = (await catalog(db, rollout.organization, { includeDisabled: true })).find(
    (e) => e.module.id === rollout.noCodeModuleId,
  );
  return page(
    c,
    rolloutPage(c.var.viewer, rollout.organization, rollout, items, names, entry?.registryModule.name ?? "Module"),
  );
});

consoleApp.post(
  "/:org/rollouts/:rid/actions/:action{confirm|pause|resume|cancel}",
  rights({ right: "run-workspaces" }),
  async (c) => {
    const { rollout } = await rolloutOf(c);
    await rolloutAction(c.var.db, rollout.id, c.req.param("action") as RolloutAction, defaultUpgradeDeps(c.env));
    return seeOther(c, rolloutPath(rollout.organization, rollout.id));
  },
);

/** The provisionable module of the form: enabled with an ingested pin; 404 otherwise (the catalog does not offer it). */
async function provisionTarget(c: Ctx) {
  const db = c.var.db;
  const entry = await moduleEntry(c, db);
  if (!entry.module.enabled || !entry.facts || entry.module.versionPin === null) throw notFound();
  const [version, options] = await Promise.all([
    findModuleVersion(db, entry.registryModule.id, entry.module.versionPin),
    listVariableOptions(db, entry.module.id),
  ]);
  const summary = version ? versionSummary(version) : null;
  if (!summary) throw notFound();
  const fields = formFields(summary, options);
  return { entry, fields };
}

consoleApp.get("/:org/modules/:id/provision", rights({ right: "run-workspaces" }), async (c) => {
  const { entry, fields } = await provisionTarget(c);
  return page(c, provisionPage(c.var.viewer, c.req.param("org"), entry, fields, {}, null));
});

consoleApp.post("/:org/modules/:id/provision", rights({ right: "run-workspaces" }), async (c) => {
  const { entry, fields } = await provisionTarget(c);
  const org = c.req.param("org");
  const values = c.var.form;
  const document = provisionDocument(fields, values) as {
    data: { relationships: { vars: { data: { attributes: { key: string } }[] } } };
  };
  // E4 itself: the same document, service, checks and writes as the API.
  try {
    const db = createDb(c.env.DB);
    const module = await cachedNoCodeModuleWithOptions(db, entry.module.id);
    if (!module) throw notFound();
    const input = readWorkspaceDocument(document);
    const { workspace } = await provisionWorkspace(c.env, db, module, input, c.var.requestId);
    return seeOther(c, `${workspacePath(org, workspace.name)}?notice=created`);
  } catch (err) {
    if (!(err instanceof NocodeError) || (err.code !== "invalid_attribute" && err.code !== "unprocessable")) throw err;
    const sent = document.data.relationships.vars.data.map((v) => v.attributes.key);
    return page(c, provisionPage(c.var.viewer, org, entry, fields, values, formErrors(err, fields, sent)), 422);
  }
});

/** The workspace `:name` of `:org` (its route's rights checked the organization); 404 otherwise. */
async function workspaceOf(c: Ctx): Promise<{ db: Db; ws: WorkspaceRow }> {
  const db = c.var.db;
  const ws = await findWorkspaceByName(db, c.req.param("org") ?? "", c.req.param("name") ?? "");
  if (!ws) throw notFound();
  return { db, ws };
}

consoleApp.get("/:org/workspaces/:name", rights({ right: "read-workspaces" }), async (c) => {
  const { db, ws } = await workspaceOf(c);
  const module = ws.noCodeModuleId ? await findNoCodeModule(db, ws.noCodeModuleId) : undefined;
  const [vars, runs, upgradeAvailable, canManage, entries] = await Promise.all([
    listWorkspaceVars(db, ws.id),
    listWorkspaceRuns(db, ws.id, 20),
    noCodeUpgradeAvailable(db, ws),
    c.var.orgRights.has("run-workspaces"),
    module ? catalog(db, ws.organization, { includeDisabled: true }) : Promise.resolve([]),
  ]);
  const entry = entries.find((e) => e.module.id === module?.id);
  // N19: an agent workspace shows its latest plan's changes from the engine's JSON plan.
  const planned = ws.executionMode === "agent" ? runs.find((r) => r.plan && r.executionMode === "agent") : undefined;
  const latestPlan = planned ? { run: planned, view: await loadEnginePlan(c.env, db, planned) } : undefined;
  return page(
    c,
    workspacePage(c.var.viewer, ws.organization, ws, {
      latestPlan,
      vars,
      runs,
      moduleName: entry?.registryModule.name ?? null,
      pin: module?.versionPin ?? null,
      upgradeAvailable,
      canManage,
      notice: NOTICES[c.req.query("notice") ?? ""] ?? null,
    }),
  );
});

// E5 from the banner: plan the upgrade, then review it.
consoleApp.post("/:org/workspaces/:name/upgrade", rights({ right: "run-workspaces" }), async (c) => {
  const { db, ws } = await workspaceOf(c);
  if (!ws.noCodeModuleId) throw notFound();
  // E5 with an empty body: no vars, no message.
  const target = await findUpgradeTarget(db, ws.noCodeModuleId, ws.id);
  if (!target) throw notFound();
  const { module, workspace } = target;
  const result = await initiateUpgrade(c.env, db, module, workspace, NO_UPGRADE_INPUT);
  if (result.kind === "no-upgrade") return seeOther(c, `${workspacePath(ws.organization, ws.name)}?notice=no-upgrade`);
  return seeOther(c, reviewPath(ws.organization, ws.name, result.run.id));
});

/**
 * The run `:run_id` of the workspace `:name` (its route's rights checked the organization),
 * an upgrade run when `upgrade` is set (as E6/E7); 404 for any other run.
 */
async function workspaceRun(c: Ctx, options: { upgrade: boolean }) {
  const { db, ws } = await workspaceOf(c);
  const run = await findRun(db, c.req.param("run_id") ?? "");
  if (!run || run.workspaceId !== ws.id || (options.upgrade && run.kind !== "upgrade")) throw notFound();
  return { db, ws, run };
}

consoleApp.get("/:org/workspaces/:name/upgrade/:run_id", rights({ right: "read-workspaces" }), async (c) => {
  const { db, ws, run } = await workspaceRun(c, { upgrade: true });
  const model = await loadPlanPageModel(db, { workspace: ws, run }, c.env);
  // N19: an agent plans the upgrade after E5 answered; until then the page says what it waits for.
  const canManage = c.var.orgRights.has("run-workspaces");
  if (!model) return page(c, upgradePendingPage(c.var.viewer, ws.organization, ws, run, canManage));
  return page(c, upgradeReviewPage(c.var.viewer, ws.organization, ws, model, canManage));
});

// E7 from the review page.
consoleApp.post("/:org/workspaces/:name/upgrade/:run_id/confirm", rights({ right: "run-workspaces" }), async (c) => {
  const { db, ws, run } = await workspaceRun(c, { upgrade: true });
  if (!run.noCodeModuleId) throw notFound();
  await confirmUpgrade(db, run.noCodeModuleId, ws.id, run.id, defaultUpgradeDeps(c.env));
  return seeOther(c, `${workspacePath(ws.organization, ws.name)}?notice=upgraded`);
});

// N19a cancel (as `POST /runs/:id/actions/cancel`): a run not yet finished of this workspace.
consoleApp.post(
  "/:org/workspaces/:name/runs/:run_id/actions/cancel",
  rights({ right: "run-workspaces" }),
  async (c) => {
    const { db, ws, run } = await workspaceRun(c, { upgrade: false });
    const outcome = await cancelRun(c.env, db, run.id);
    if (outcome.kind === "refused") throw new NocodeError("conflict", `${outcome.detail}.`);
    if (outcome.kind === "canceled") {
      // N15: a rollout holding the run goes on without it, as after the API's cancel.
      await notifyRolloutOfRun(db, run.id, async (message) => {
        await c.env.PROVISION_QUEUE.send(message, { contentType: "json" });
      });
    }
    return seeOther(c, `${workspacePath(ws.organization, ws.name)}?notice=${outcome.kind}`);
  },
);

// N7 run actions (as `POST /runs/:id/actions/apply|discard`): a planned run of this workspace.
consoleApp.post(
  "/:org/workspaces/:name/runs/:run_id/actions/:action{apply|discard}",
  rights({ right: "run-workspaces" }),
  async (c) => {
    const { db, ws, run } = await workspaceRun(c, { upgrade: false });
    const action = c.req.param("action");
    if (action === "apply") {
      // N8: an upgrade run is confirmed by E7 (the review page), which also switches the version.
      if (run.kind === "upgrade") return seeOther(c, reviewPath(ws.organization, ws.name, run.id));
      if (!(await confirmRun(c.env, db, run.id)))
        throw new NocodeError(
          "conflict",
          `The run is ${run.status.replaceAll("_", " ")}; it is not waiting for confirmation.`,
        );
      return seeOther(c, `${workspacePath(ws.organization, ws.name)}?notice=applied`);
    }
    if (!(await discardRun(db, run.id)))
      throw new NocodeError(
        "conflict",
        `The run is ${run.status.replaceAll("_", " ")}; only a planned run can be discarded.`,
      );
    return seeOther(c, `${workspacePath(ws.organization, ws.name)}?notice=discarded`);
  },
);

// Anything else under /app (the plan page's GET is matched before this, src/index.ts).
consoleApp.all("*", notFoundPage);
