/**
 * The per-route rights annotation of /api/v2 (decisions N10, N10a; issue 14 "prove the
 * class is gone"). Every route lists `rights(rule)` before its handler; the rule says who
 * may call it. The middleware does nothing at run time: each handler enforces its rule
 * through ./permissions.ts (it must first find the organization a path addresses). The
 * authorization matrix test (test/worker/nocode/authorization-matrix.test.ts) reads the
 * rules back from Hono's `app.routes`, fails for a route without one, and checks every
 * route against them for every kind of caller.
 */
import type { MiddlewareHandler } from "hono";
import type { NocodeEnv } from "./env";
import type { OrgPermission } from "./permissions";

/** Who may call a route. */
export type RouteRule =
  /** No token needed: the route carries its own credential; it must be in UNAUTHENTICATED_ROUTES (./unauthenticated.ts). */
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
 * changes must reach the isolate that made them at once (decisions N13, issue 19).
 * - `"clears"` (the default): the route may change what the cache holds (tokens, users,
 *   teams, memberships, no-code modules and their variable options), so ./app.ts clears
 *   the whole cache after it runs.
 * - `"unchanged"`: the route writes none of the tables the cached loaders read
 *   (NOCODE_CACHE_ENTRIES in ./cache.ts), so the cache is left as it is.
 *   test/worker/nocode/cache-consistency.test.ts records every statement each such route
 *   sends to D1 and fails if one writes such a table: declare it only with that proof.
 */
export type CacheEffect = "clears" | "unchanged";

const RULE = Symbol.for("keyway.nocode.route-rule");
const CACHE_EFFECT = Symbol.for("keyway.nocode.route-cache-effect");

type Annotated = MiddlewareHandler<NocodeEnv> & { [RULE]?: RouteRule; [CACHE_EFFECT]?: CacheEffect };

/**
 * The annotation: a middleware carrying `rule` (checked by the handler, see above) and
 * the route's cache effect, which it records on the request for ./app.ts.
 */
export function rights(rule: RouteRule, options: { cache?: CacheEffect } = {}): MiddlewareHandler<NocodeEnv> {
  const effect = options.cache ?? "clears";
  const handler: Annotated = async (c, next) => {
    if (effect === "unchanged") c.set("cacheUnchanged", true);
    await next();
  };
  handler[RULE] = rule;
  handler[CACHE_EFFECT] = effect;
  return handler;
}

/**
 * The rule a route handler carries, or undefined. Hono wraps the handlers of a sub-app
 * that has its own error handler when it is mounted (`app.route`), keeping the original
 * under the property `__COMPOSED_HANDLER` (hono/utils/constants): unwrap that too.
 */
export function ruleOf(handler: unknown): RouteRule | undefined {
  return annotationOf(handler)?.[RULE];
}

/** The cache effect a route handler declares through {@link rights}, or undefined when it carries no annotation. */
export function cacheEffectOf(handler: unknown): CacheEffect | undefined {
  return annotationOf(handler)?.[CACHE_EFFECT];
}

function annotationOf(handler: unknown): { [RULE]?: RouteRule; [CACHE_EFFECT]?: CacheEffect } | undefined {
  let h: unknown = handler;
  for (let depth = 0; typeof h === "function" && depth < 8; depth++) {
    const fn = h as { [RULE]?: RouteRule; [CACHE_EFFECT]?: CacheEffect; __COMPOSED_HANDLER?: unknown };
    if (fn[RULE]) return fn;
    h = fn.__COMPOSED_HANDLER;
  }
  return undefined;
}
