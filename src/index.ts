/**
 * Keyway: one Worker serving two APIs (decision B1).
 * - `/v1/…` — the SSH secrets service (Vault's SSH secrets engine API), one dispatcher;
 * - `/api/v2/…` — no-code provisioning (HCP Terraform's no-code API), a Hono app, as are
 *   the plan page and the self-service console under `/app`.
 */
import { Hono } from "hono";
import { matchedRoutes } from "hono/route";
import type { AppEnv } from "./app-env";
import { guardEnv } from "./db/d1-guard";
import { logAccess } from "./lib/access-log";
import { cachedDeploymentProblem, misconfiguredMessage } from "./lib/deployment-config";
import { attachRequestRecord, incomingRequestId, REQUEST_ID_HEADER, type RequestRecord } from "./lib/http/request-id";
import { logError } from "./lib/log";
import { AGENT_PROTOCOL_PREFIX, agentProtocolApp } from "./nocode/agents/protocol-routes";
import { nocodeApp } from "./nocode/app";
import { consoleApp } from "./nocode/console/routes";
import { discoveryApp } from "./nocode/discovery/routes";
import { JSONAPI_MEDIA_TYPE, nocodeMisconfigured } from "./nocode/errors";
import { planPageApp } from "./nocode/plan-page/routes";
import { stampRequestId } from "./nocode/queue/request-id";
import { REGISTRY_PROTOCOL_PREFIX, registryProtocolApp } from "./nocode/registry/protocol-routes";
import { sweepAbandonedUploads } from "./nocode/registry/uploads";
import { handleQueue } from "./queue";
import { requestId } from "./request-id-middleware";
import { isSecretsUrl, serveSecrets } from "./ssh/dispatcher";
import { vaultMisconfigured } from "./ssh/errors";
import { scheduledTidy } from "./ssh/revocation/routes";

export { AgentPool } from "./nocode/agents/pool-object";
export { SignInStore } from "./platform/sign-in-store";
export { OtpStore } from "./ssh/otp/otp-store";

const app = new Hono<AppEnv>();
// The route pattern that answered (for the access log): the matched handler's, or null when
// only middleware ran (an unknown path, or a request refused before routing).
app.use(
  "*",
  requestId((c) => {
    const route = matchedRoutes(c)[c.req.routeIndex];
    return route && route.method !== "ALL" ? route.path : null;
  }),
);

// Sub-apps carry their own onError into app.route(), so register them
// after their error handlers are set (they are, at module load).
app.route("/api/v2", nocodeApp);
app.route(AGENT_PROTOCOL_PREFIX, agentProtocolApp); // N18: the agent protocol; agent tokens authenticate only here
app.route(REGISTRY_PROTOCOL_PREFIX, registryProtocolApp); // B13: Terraform's module registry protocol
app.route("/app", planPageApp); // N8 plan page: outside /api/v2, carries its own credential (view token, Bearer or console session)
app.route("/app", consoleApp); // N14 self-service console: every other page under /app
app.route("/", discoveryApp); // B12: /.well-known/terraform.json

// Root not-found, in JSON:API's format: /v1 never reaches this app (see fetch below),
// so this serves /api/v2 paths that matched no route, and the rest.
app.notFound((c) =>
  c.body(JSON.stringify({ errors: [{ status: "404", title: "not found" }] }), 404, {
    "Content-Type": JSONAPI_MEDIA_TYPE,
  }),
);

/**
 * B10: while the secrets are misconfigured, every request answers 503 naming the setting
 * (never its value): /v1 in Vault's format, /api/… in JSON:API's, anything else as text.
 */
function misconfigured(request: Request, problem: string, id: string): Response {
  const message = misconfiguredMessage(problem);
  let response: Response;
  if (isSecretsUrl(request.url)) response = vaultMisconfigured(message);
  else if (new URL(request.url).pathname.startsWith("/api/")) response = nocodeMisconfigured(message);
  else
    response = new Response(`${message}\n`, { status: 503, headers: { "Content-Type": "text/plain; charset=utf-8" } });
  response.headers.set(REQUEST_ID_HEADER, id);
  return response;
}

/**
 * The Worker's HTTP entrypoint: /v1 to the secrets dispatcher, the rest to Hono. Every
 * request gets its id (B15), its queue messages carry it, and it ends with one access line.
 */
export async function handleFetch(request: Request, rawEnv: Env, ctx: ExecutionContext): Promise<Response> {
  const started = Date.now();
  const record: RequestRecord = { id: incomingRequestId(request.headers), route: null };
  let status = 500;
  try {
    let response: Response;
    const problem = cachedDeploymentProblem(rawEnv);
    if (problem !== null) response = misconfigured(request, problem, record.id);
    else {
      // B8: D1's limits enforced in tests (inert in production); B15: queue messages carry the id.
      const requestEnv = stampRequestId(guardEnv(rawEnv), record.id);
      if (isSecretsUrl(request.url)) response = await serveSecrets(request, requestEnv, record, ctx);
      else {
        attachRequestRecord(request, record);
        response = await app.fetch(request, requestEnv, ctx);
      }
    }
    status = response.status;
    return response;
  } finally {
    logAccess({
      method: request.method,
      route: record.route,
      status,
      duration_ms: Date.now() - started,
      request_id: record.id,
    });
  }
}

export default {
  fetch: handleFetch,
  queue: handleQueue,
  // The hourly cron trigger of wrangler.jsonc: S22/S23 tidy the certificate inventory and
  // revocations; B16 deletes the objects of module uploads that never finished.
  scheduled: (_controller, env, ctx) => {
    ctx.waitUntil(scheduledTidy(env));
    ctx.waitUntil(
      sweepAbandonedUploads(env).then(
        () => undefined,
        (err) => logError("scheduled-uploads", "sweeping abandoned module uploads failed", err),
      ),
    );
  },
} satisfies ExportedHandler<Env>;
