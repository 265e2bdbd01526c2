/**
 * Where sign-in returns to (N16): the `return` query parameter of `/app/~/sign-in`, which
 * `terraform login` reaches as `/app/settings/tokens?source=terraform-login`. Only a
 * same-origin path under `/app/` is followed; anything else (an absolute URL, `//host`,
 * a backslash, a dot segment, a percent-encoded slash, dot or backslash, a control
 * character, a path outside `/app/`) falls back to `/app`, so sign-in can never be used
 * to send someone to another site (an open redirect). Pure: no bindings.
 */

/** Where sign-in lands when no acceptable `return` was given. */
export const DEFAULT_RETURN = "/app";

/** Longest `return` value followed; longer ones are ignored. */
const MAX_RETURN_LENGTH = 1024;

/**
 * `/app`, or `/app/` and segments of unreserved characters (RFC 3986 section 2.3), then an
 * optional query of unreserved characters, `=`, `&`, `+` and well-formed percent escapes.
 * No `%` in the path: no console path needs one, and an escaped `/`, `\` or `.` in a path
 * is how the usual tricks get past a check that a browser or router later decodes.
 */
const RETURN_PATH =
  /^\/app(?:\/(?:[A-Za-z0-9_.~-]+\/)*(?:[A-Za-z0-9_.~-]+)?)?(?:\?(?:[A-Za-z0-9_.~=&+-]|%[0-9A-Fa-f]{2})*)?$/;

/** The console's own machinery (`/app/~/sign-in`, `sign-out`, assets) is never a destination. */
const MACHINERY = "/app/~/";

/** The path sign-in should return to for `raw` (the query parameter as decoded once), or {@link DEFAULT_RETURN}. */
export function consoleReturnPath(raw: string | undefined | null): string {
  if (!raw || raw.length > MAX_RETURN_LENGTH || !RETURN_PATH.test(raw)) return DEFAULT_RETURN;
  const path = raw.split("?", 1)[0]!;
  if (path.split("/").some((segment) => /^\.+$/.test(segment))) return DEFAULT_RETURN;
  if (`${path}/`.startsWith(MACHINERY)) return DEFAULT_RETURN;
  // The WHATWG URL parser (what a browser does with our Location header) must read the
  // value as exactly this path and query on this origin.
  const base = "https://console.invalid";
  const parsed = new URL(raw, base);
  if (parsed.origin !== base || `${parsed.pathname}${parsed.search}` !== raw) return DEFAULT_RETURN;
  return raw;
}
