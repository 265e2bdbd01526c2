import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../../app-env";

/** The response header that echoes a request's id. */
export const REQUEST_ID_HEADER = "X-Request-Id";

/** A fresh request id (a random UUID). */
export function newRequestId(): string {
  return crypto.randomUUID();
}

/** Assign every request an id, expose it as `X-Request-Id`, and keep it for logs. */
export const requestId = (): MiddlewareHandler<AppEnv> => async (c, next) => {
  const id = newRequestId();
  c.set("requestId", id);
  await next();
  c.res.headers.set(REQUEST_ID_HEADER, id);
};
