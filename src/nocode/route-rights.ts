/**
 * The rights of every /api/v2 route and console page (decisions N2, N10, N10a, N13).
 * Every route lists `rights(rule, { scope })` right after authentication and before its
 * `operation(...)` and handler. The middleware is the check: it finds what the path
 * addresses (the scope: by default the organization `:org`; a feature passes its own to
 * load a workspace, run, team, …), reads the caller's rights in that organization, answers
 * 404 `not found` when the thing does not exist or the caller may not use it, and
 * otherwise hands the handler the addressed thing (the scope's `of(c)`) and the caller's
 * rights there (`c.var.orgRights`). Handlers never check a right again. Since validation
 * runs in the handler (`await op.body(c)`), N2's order — 404 for what the caller cannot
 * see before any 4xx of validation — follows from the order of the middlewares.
 *
 * The authorization matrix test (test/worker/nocode/authorization-matrix.test.ts) reads
 * the rules back from Hono's `app.routes`, fails for a route without one, and checks every
 * route against them for every kind of caller. docs/api-nocode.md ("Declaring a route's
 * rights") shows how a new route declares its rule.
 */
import type { Context, MiddlewareHandler } from "hono";
import { COMPOSED_HANDLER } from "hono/utils/constants";
import type { NocodeCaller } from "./access/auth";
import { mayDelegateTeam, type OrgPermission, orgCallerPermissions, type teamPermissions } from "./access/permissions";
import type { NocodeEnv } from "./env";
import { notFound } from "./errors";

/** Who may call a route. */
export type RouteRule =
  /** No token needed: the route carries its own credential; it must be in UNAUTHENTICATED_ROUTES (./access/unauthenticated.ts). */
  | { caller: "public" }
  /** Any valid token. */
  | { caller: "any" }
  /** ADMIN_TOKEN only (N9: organizations and users; N6: the release list). */
  | { caller: "admin" }
  /** A user token (the caller's own account). */
  | { caller: "user" }
  /** The user the path names (or whose token it names), or ADMIN_TOKEN (N9, N13). */
  | { caller: "user-self" }
  /**
   * A right in the organization the path addresses. `team: "delegate"`: the route acts on
   * a team's tokens or membership, so N10a's no-escalation rule applies too.
   */
  | { right: OrgPermission; team?: "delegate" };

/**
 * What a write route does to the per-isolate cache (./cache.ts), declared beside its
 * rights because it is part of the same security contract: revocation and permission
 * changes must reach the isolate that made them at once (decision N13).
 * - `"clears"` (the default): the route may change what the cache holds (tokens, users,
 *   teams, memberships, no-code modules and their variable options), so ./app.ts clears
 *   the whole cache after it runs.
 * - `"unchanged"`: the route writes none of the tables the cached loaders read
 *   (NOCODE_CACHE_ENTRIES in ./cache.ts), so the cache is left as it is.
 *   test/worker/nocode/cache-consistency.test.ts records every statement each such route
 *   sends to D1 and fails if one writes such a table: declare it only with that proof.
 */
export type CacheEffect = "clears" | "unchanged";

/** A team as N10a's no-escalation rule reads it (./access/permissions.ts mayDelegateTeam). */
type DelegatedTeam = Parameters<typeof teamPermissions>[0] & { organization: string };

/**
 * Who owns what a path addresses, which decides the check:
 * - `organization`: the caller must hold the rule's right there (or `right`, when the
 *   scope names another: a token of an organization is managed with `manage-teams`);
 * - `team`: N10a — the caller must be allowed to delegate that team (`team: "delegate"`);
 * - `user`: the rule `user-self` — that user or ADMIN_TOKEN (N9, N13).
 */
export type Owner = { organization: string; right?: OrgPermission } | { team: DelegatedTeam } | { user: string };

/** What a scope found: the thing addressed and its owner; undefined → 404. */
export type Addressed<R> = { resource: R } & Owner;

/**
 * How a route finds what its path addresses (a workspace by `:id`, a run by its plan id,
 * …): `load` only reads (the check is {@link rights}'), `of` hands the handler what was
 * loaded for this request. Made with {@link scope}.
 */
export interface Scope<R> {
  load(c: Context<NocodeEnv>): Promise<Addressed<R> | undefined>;
  of(c: { var: NocodeEnv["Variables"] }): R;
}

/** A scope from its loader: return undefined when nothing is there (→ 404). */
export function scope<R>(load: (c: Context<NocodeEnv>) => Promise<Addressed<R> | undefined>): Scope<R> {
  const made: Scope<R> = {
    load,
    of: (c) => {
      const loaded = c.var.resource as { scope: unknown; value: R } | undefined;
      // A handler reading another scope than its route's rights declared is a programming error.
      if (loaded?.scope !== made) throw new Error("this route's rights(…) declared another scope");
      return loaded.value;
    },
  };
  return made;
}

/** The organization named by the path parameter `name` (its name is the resource); `:org` is the default scope. */
export function organizationParam(name: string): Scope<string> {
  return scope(async (c) => {
    const organization = c.req.param(name) ?? "";
    return { resource: organization, organization };
  });
}

const ORG_PARAM = organizationParam("org");

const RULE = Symbol.for("keyway.nocode.route-rule");
const CACHE_EFFECT = Symbol.for("keyway.nocode.route-cache-effect");

type Annotated = MiddlewareHandler & { [RULE]?: RouteRule; [CACHE_EFFECT]?: CacheEffect };

const NO_RIGHTS: ReadonlySet<OrgPermission> = new Set();

/** Caller rules: no scope, the caller's kind decides. */
type CallerRule = Extract<RouteRule, { caller: "public" | "any" | "admin" | "user" }>;

/**
 * A route's rights (see the module comment): put it first among the route's handlers.
 *
 *     const workspaceById = scope(async (c) => {
 *       const ws = await findWorkspace(c.var.db, c.req.param("id") ?? "");
 *       return ws && { resource: ws, organization: ws.organization };
 *     });
 *     routes.get("/workspaces/:id", rights({ right: "read-workspaces" }, { scope: workspaceById }), op,
 *       async (c) => render(workspaceById.of(c), c.var.orgRights));
 *
 * `{ right }` rules check the organization the scope names (default: `:org`);
 * `user-self` needs a scope naming the user (or, for a token, its team or organization);
 * caller rules (`public`, `any`, `admin`, `user`) take no scope. `cache` declares the
 * route's effect on the per-isolate cache (see {@link CacheEffect}).
 */
export function rights(rule: CallerRule, options?: { cache?: CacheEffect }): MiddlewareHandler<NocodeEnv>;
export function rights<R>(
  rule: Exclude<RouteRule, CallerRule>,
  options?: { cache?: CacheEffect; scope?: Scope<R> },
): MiddlewareHandler<NocodeEnv>;
export function rights(
  rule: RouteRule,
  options: { cache?: CacheEffect; scope?: Scope<unknown> } = {},
): MiddlewareHandler<NocodeEnv> {
  const effect = options.cache ?? "clears";
  const scope = options.scope ?? ("right" in rule ? ORG_PARAM : undefined);
  const handler: MiddlewareHandler<NocodeEnv> = async (c, next) => {
    if (effect === "unchanged") c.set("cacheUnchanged", true);
    if (!callerMay(rule, c.var.caller)) throw notFound();
    let orgRights = NO_RIGHTS;
    if (scope) {
      const found = await scope.load(c);
      if (!found) throw notFound();
      orgRights = await ownerCheck(c, rule, found);
      c.set("resource", { scope, value: found.resource });
    }
    c.set("orgRights", orgRights);
    await next();
  };
  return Object.assign(handler, { [RULE]: rule, [CACHE_EFFECT]: effect });
}

/** The rules that depend on the caller alone (the others pass here and are checked against the scope). */
function callerMay(rule: RouteRule, caller: NocodeCaller | undefined): boolean {
  if (!("caller" in rule)) return true;
  switch (rule.caller) {
    case "public":
      return true;
    case "any":
    case "user-self":
      return caller !== undefined;
    case "admin":
      return caller?.kind === "admin";
    case "user":
      return caller?.kind === "user";
  }
}

/** The check of what the scope found against its owner; the caller's rights in its organization, else 404. */
async function ownerCheck(
  c: Context<NocodeEnv>,
  rule: RouteRule,
  found: Addressed<unknown>,
): Promise<ReadonlySet<OrgPermission>> {
  const caller = c.var.caller as NocodeCaller | undefined;
  // Only `public` routes run without a caller, and they take no scope; never let one through.
  if (!caller) throw notFound();
  if ("user" in found) {
    if (caller.kind === "admin" || (caller.kind === "user" && caller.userId === found.user)) return NO_RIGHTS;
    throw notFound();
  }
  if ("team" in found) {
    const held = await orgCallerPermissions(c.var.db, caller, found.team.organization);
    if (!mayDelegateTeam(caller, held, found.team)) throw notFound();
    return held;
  }
  const held = await orgCallerPermissions(c.var.db, caller, found.organization);
  const right = found.right ?? ("right" in rule ? rule.right : undefined);
  if (right === undefined || !held.has(right)) throw notFound();
  return held;
}

/** The rule a route handler carries, or undefined (see {@link annotationOf}). */
export function ruleOf(handler: unknown): RouteRule | undefined {
  return annotationOf(handler)?.[RULE];
}

/** The cache effect a route handler declares through {@link rights}, or undefined when it carries no annotation. */
export function cacheEffectOf(handler: unknown): CacheEffect | undefined {
  return annotationOf(handler)?.[CACHE_EFFECT];
}

function annotationOf(handler: unknown): Annotated | undefined {
  return fromComposedHandler(handler, (fn) => ((fn as Annotated)[RULE] ? (fn as Annotated) : undefined));
}

/**
 * What `read` finds on a route handler or on the handler it wraps. Hono wraps the handlers
 * of a sub-app that has its own error handler when it is mounted (`app.route`), keeping the
 * original under the property named by COMPOSED_HANDLER (hono/utils/constants): this
 * unwraps it, for the rules here and the descriptions of ./request/operation.ts.
 */
export function fromComposedHandler<T>(handler: unknown, read: (fn: object) => T | undefined): T | undefined {
  let h: unknown = handler;
  for (let depth = 0; typeof h === "function" && depth < 8; depth++) {
    const found = read(h);
    if (found !== undefined) return found;
    h = (h as { [COMPOSED_HANDLER]?: unknown })[COMPOSED_HANDLER];
  }
  return undefined;
}
