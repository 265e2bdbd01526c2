/**
 * N2a: the /api/v2 routes that skip the token check, as data. It is the only exemption:
 * the token check in ../app.ts and the authorization matrix test
 * (test/worker/nocode/authorization-matrix.test.ts) both read this list, so a route
 * made public here is public in both, and nowhere else.
 */

/** A route pattern in Hono's syntax (`:name` matches one non-empty path segment). */
export interface UnauthenticatedRoute {
  /** An HTTP method, or `*` for every method. */
  method: string;
  path: string;
  /** Why it needs no token (each carries its own credential, or is public by decision). */
  why: string;
  /** A token sent anyway is still checked (401 when bad), so a client can test its token. */
  checksTokenWhenSent?: boolean;
}

export const UNAUTHENTICATED_ROUTES: readonly UnauthenticatedRoute[] = [
  // Any method: an unknown, spent or expired link is simply not there (404), token or not.
  { method: "*", path: "/api/v2/uploads/:token", why: "N9: the single-use upload link is its own credential" },
  // B23, N20: run-data links carry their own credential (an HMAC over purpose, id, expiry).
  {
    method: "GET",
    path: "/api/v2/signed/state-versions/:id",
    why: "B23: the signed state download is its own credential",
  },
  {
    method: "GET",
    path: "/api/v2/signed/plans/:id/json-output",
    why: "B23: the signed JSON plan is its own credential",
  },
  { method: "GET", path: "/api/v2/signed/logs/:id", why: "B23: log-read-url is its own credential" },
  { method: "GET", path: "/api/v2/openapi.json", why: "B14: the API's OpenAPI document is public, as Vault's is" },
  {
    method: "GET",
    path: "/api/v2/ping",
    why: "B12: HCP Terraform answers ping without a token",
    checksTokenWhenSent: true,
  },
];

/** Whether `path` matches the pattern `pattern` segment by segment. */
function pathMatches(pattern: string, path: string): boolean {
  const want = pattern.split("/");
  const got = path.split("/");
  if (want.length !== got.length) return false;
  return want.every((segment, i) => (segment.startsWith(":") ? got[i] !== "" : segment === got[i]));
}

/** The exemption a request falls under, if any (N2a). */
export function unauthenticatedRouteOf(method: string, path: string): UnauthenticatedRoute | undefined {
  return UNAUTHENTICATED_ROUTES.find((r) => (r.method === "*" || r.method === method) && pathMatches(r.path, path));
}

/** Whether a request may skip the token check (N2a). */
export function isUnauthenticatedRoute(method: string, path: string): boolean {
  return unauthenticatedRouteOf(method, path) !== undefined;
}
