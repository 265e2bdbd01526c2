/**
 * One structured access line per request (decision B15). Fields are fixed and never
 * carry a secret: the route *pattern* (`/v1/ssh/verify`, `/api/v2/uploads/:token`),
 * never the concrete path or query, which may hold a token, an OTP or a name; no header,
 * no body. Workers Logs (`observability` in wrangler.jsonc) indexes the JSON fields.
 */
export interface AccessLine {
  method: string;
  /** The route pattern that answered; null when no route matched. */
  route: string | null;
  status: number;
  duration_ms: number;
  request_id: string;
}

export function logAccess(line: AccessLine): void {
  console.log(JSON.stringify({ level: "info", message: "access", ...line }));
}
