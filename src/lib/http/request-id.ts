/** The response header that echoes a request's id. */
export const REQUEST_ID_HEADER = "X-Request-Id";

/** B15: an incoming id is kept only in this shape (no spaces, quotes or control characters). */
const INCOMING_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** A fresh request id (a random UUID). */
export function newRequestId(): string {
  return crypto.randomUUID();
}

/** Whether `value` may be used as a request id as received (B15). */
export function isAcceptableRequestId(value: unknown): value is string {
  return typeof value === "string" && INCOMING_ID.test(value);
}

/**
 * The id of an incoming request (B15): its `X-Request-Id` when acceptable, else its
 * `cf-ray` when acceptable, else a new one. A proxy's id thus ties Keyway's log lines to
 * the proxy's.
 */
export function incomingRequestId(headers: Headers): string {
  const given = headers.get(REQUEST_ID_HEADER);
  if (isAcceptableRequestId(given)) return given;
  const ray = headers.get("cf-ray");
  if (isAcceptableRequestId(ray)) return ray;
  return newRequestId();
}

/**
 * What the Worker's entry point learns about a request while serving it, for its access
 * log line: the id, and the route pattern that served it (never the concrete path, which
 * may carry a token).
 */
export interface RequestRecord {
  id: string;
  route: string | null;
}

const records = new WeakMap<Request, RequestRecord>();

/** Attach the entry point's record to a request, for the Hono apps to read and fill. */
export function attachRequestRecord(request: Request, record: RequestRecord): void {
  records.set(request, record);
}

/** The record the entry point attached, if any. */
export function requestRecordOf(request: Request): RequestRecord | undefined {
  return records.get(request);
}
