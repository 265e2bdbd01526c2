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

const RULE = Symbol.for("keyway.nocode.route-rule");

type Annotated = MiddlewareHandler & { [RULE]?: RouteRule };

/** The annotation: a pass-through middleware carrying `rule`. */
export function rights(rule: RouteRule): MiddlewareHandler {
  const handler: Annotated = async (_c, next) => {
    await next();
  };
  handler[RULE] = rule;
  return handler;
}

/**
 * The rule a route handler carries, or undefined. Hono wraps the handlers of a sub-app
 * that has its own error handler when it is mounted (`app.route`), keeping the original
 * under the property `__COMPOSED_HANDLER` (hono/utils/constants): unwrap that too.
 */
export function ruleOf(handler: unknown): RouteRule | undefined {
  let h: unknown = handler;
  for (let depth = 0; typeof h === "function" && depth < 8; depth++) {
    const fn = h as { [RULE]?: RouteRule; __COMPOSED_HANDLER?: unknown };
    if (fn[RULE]) return fn[RULE];
    h = fn.__COMPOSED_HANDLER;
  }
  return undefined;
}
