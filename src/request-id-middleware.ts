/**
 * The request-id middleware of the Hono apps (B15). It lives beside the entry point, not in
 * src/lib/http/request-id.ts with the id rules it applies, because it depends on Hono and
 * on the Worker's AppEnv (src/lib stays pure).
 */
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./app-env";
import { incomingRequestId, REQUEST_ID_HEADER, requestRecordOf } from "./lib/http/request-id";

/**
 * Give every request an id (the entry point's, else B15's rule), expose it as
 * `X-Request-Id`, keep it for logs, and report the route pattern that answered.
 */
export const requestId =
  (routeOf: (c: Parameters<MiddlewareHandler<AppEnv>>[0]) => string | null): MiddlewareHandler<AppEnv> =>
  async (c, next) => {
    const record = requestRecordOf(c.req.raw);
    const id = record?.id ?? incomingRequestId(c.req.raw.headers);
    c.set("requestId", id);
    await next();
    c.res.headers.set(REQUEST_ID_HEADER, id);
    if (record) record.route = routeOf(c);
  };
