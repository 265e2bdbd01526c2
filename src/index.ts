/**
 * Keyway: one Worker serving two APIs (decision B1).
 * - `/v1/…` — the SSH secrets service (Vault's SSH secrets engine API), one dispatcher;
 * - `/api/v2/…` — no-code provisioning (HCP Terraform's no-code API), a Hono app, as are
 *   the plan page and the self-service console under `/app`.
 */
import { Hono } from "hono";
import type { AppEnv } from "./app-env";
import { guardEnv } from "./db/d1-guard";
import { cachedDeploymentProblem, misconfiguredMessage } from "./lib/deployment-config";
import { newRequestId, REQUEST_ID_HEADER, requestId } from "./lib/http/request-id";
import { JSONAPI_MEDIA_TYPE, nocodeMisconfigured } from "./nocode/errors";
import { nocodeApp } from "./nocode/app";
import { consoleApp } from "./nocode/console/routes";
import { planPageApp } from "./nocode/plan-page/routes";
import { handleQueue } from "./queue";
import { isSecretsUrl, serveSecrets } from "./ssh/app";
import { scheduledTidy } from "./ssh/revocation";
import { vaultMisconfigured } from "./ssh/errors";

export { OtpStore } from "./ssh/otp/otp-store";

const app = new Hono<AppEnv>();
app.use("*", requestId());

// Sub-apps carry their own onError into app.route() (house style §1), so register them
// after their error handlers are set (they are, at module load).
app.route("/api/v2", nocodeApp);
app.route("/app", planPageApp); // N8 plan page: outside /api/v2, carries its own credential (view token, Bearer or console session)
app.route("/app", consoleApp); // N14 self-service console: every other page under /app

// Root not-found, in JSON:API's format: /v1 never reaches this app (see fetch below),
// so this serves /api/v2 paths that matched no route, and the rest.
app.notFound((c) =>
  c.body(JSON.stringify({ errors: [{ status: "404", title: "not found" }] }), 404, { "Content-Type": JSONAPI_MEDIA_TYPE }),
);

/**
 * B10: while the secrets are misconfigured, every request answers 503 naming the setting
 * (never its value): /v1 in Vault's format, /api/… in JSON:API's, anything else as text.
 */
function misconfigured(request: Request, problem: string): Response {
  const message = misconfiguredMessage(problem);
  let response: Response;
  if (isSecretsUrl(request.url)) response = vaultMisconfigured(message);
  else if (new URL(request.url).pathname.startsWith("/api/")) response = nocodeMisconfigured(message);
  else response = new Response(`${message}\n`, { status: 503, headers: { "Content-Type": "text/plain; charset=utf-8" } });
  response.headers.set(REQUEST_ID_HEADER, newRequestId());
  return response;
}

/** The Worker's HTTP entrypoint: /v1 to the secrets dispatcher, the rest to Hono. */
export function handleFetch(request: Request, rawEnv: Env, ctx: ExecutionContext): Response | Promise<Response> {
  const problem = cachedDeploymentProblem(rawEnv);
  if (problem !== null) return misconfigured(request, problem);
  const env = guardEnv(rawEnv); // B8: D1's limits enforced in tests (inert in production)
  if (isSecretsUrl(request.url)) return serveSecrets(request, env, ctx);
  return app.fetch(request, env, ctx);
}

export default {
  fetch: handleFetch,
  queue: handleQueue,
  // S22/S23: the cron trigger of wrangler.toml tidies the certificate inventory and revocations.
  scheduled: (_controller, env, ctx) => {
    ctx.waitUntil(scheduledTidy(env));
  },
} satisfies ExportedHandler<Env>;
