import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../../app-env";

/** Assign every request an id, expose it as `X-Request-Id`, and keep it for logs. */
export const requestId = (): MiddlewareHandler<AppEnv> => async (c, next) => {
  const id = crypto.randomUUID();
  c.set("requestId", id);
  await next();
  c.res.headers.set("X-Request-Id", id);
};
