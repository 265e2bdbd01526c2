/**
 * Keyway: one Worker serving two APIs (decision B1).
 * - `/v1/…` — the SSH secrets service (Vault's SSH secrets engine API);
 * - `/api/v2/…` — no-code provisioning (HCP Terraform's no-code API).
 */
import { Hono } from "hono";
import type { AppEnv } from "./app-env";
import { requestId } from "./lib/http/request-id";
import { JSONAPI_MEDIA_TYPE } from "./nocode/errors";
import { nocodeApp } from "./nocode/app";
import { planPageApp } from "./nocode/plan-page/routes";
import { handleQueue } from "./queue";
import { secretsApp } from "./ssh/app";

export { OtpStore } from "./ssh/otp/otp-store";

const app = new Hono<AppEnv>();
app.use("*", requestId());

// Sub-apps carry their own onError into app.route() (house style §1), so register them
// after their error handlers are set (they are, at module load).
app.route("/v1", secretsApp);
app.route("/api/v2", nocodeApp);
app.route("/app", planPageApp); // N8 plan page: outside /api/v2, carries its own credential (view token or Bearer)

// Root not-found in each API's format: /v1 paths are all claimed by the secrets
// dispatcher (S2a), so this serves /api/v2 paths that matched no route, and the rest.
app.notFound((c) => {
  if (c.req.path === "/v1" || c.req.path.startsWith("/v1/")) return c.json({ errors: ["unsupported path"] }, 404);
  return c.body(JSON.stringify({ errors: [{ status: "404", title: "not found" }] }), 404, {
    "Content-Type": JSONAPI_MEDIA_TYPE,
  });
});

export default {
  fetch: app.fetch,
  queue: handleQueue,
} satisfies ExportedHandler<Env>;

export { app };
