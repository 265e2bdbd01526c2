/**
 * The no-code provisioning service under /api/v2 (decision B1).
 */
import { Hono } from "hono";
import * as v from "valibot";
import { createDb } from "../db/client";
import { authenticateNocode, bearerToken, waitUntilOf } from "./access/auth";
import { unauthenticatedRouteOf } from "./access/unauthenticated";
import { agentPoolRoutes } from "./agent-pools/routes";
import { AGENT_PROTOCOL_PREFIX, agentProtocolApp } from "./agents/protocol-routes";
import { agentRoutes } from "./agents/routes";
import { clearNocodeCacheAfterWrite } from "./cache";
import { discoveryApp } from "./discovery/routes";
import type { NocodeEnv } from "./env";
import { renderNocodeError, unauthorized } from "./errors";
import { registryNoCodeHooks } from "./no-code-modules/registry-hooks";
import { noCodeModuleRoutes } from "./no-code-modules/routes";
import { organizationRoutes } from "./organizations/routes";
import { projectRoutes } from "./projects/routes";
import { registryModuleRoutes } from "./registry/module-routes";
import { REGISTRY_PROTOCOL_PREFIX, registryProtocolApp } from "./registry/protocol-routes";
import { uploadRoutes } from "./registry/upload-routes";
import { versionRoutes } from "./registry/version-routes";
import { releaseRoutes } from "./releases/routes";
import { buildApiV2Document } from "./request/openapi";
import { operation } from "./request/operation";
import { rolloutRoutes } from "./rollouts/routes";
import { rights } from "./route-rights";
import { runDataRoutes } from "./run-data/routes";
import { runRoutes } from "./runs/routes";
import { ssoConfigurationRoutes } from "./sso/routes";
import { stateVersionRoutes } from "./state-versions/routes";
import { teamRoutes } from "./teams/routes";
import { upgradeRoutes } from "./upgrade/routes";
import { userRoutes } from "./users/routes";
import { workspaceLockRoutes } from "./workspaces/lock-routes";
import { workspaceRoutes } from "./workspaces/routes";

export const nocodeApp = new Hono<NocodeEnv>();
nocodeApp.onError(renderNocodeError);

// One D1 handle per request, for every route of /api/v2 (handlers pass it to services).
nocodeApp.use("*", async (c, next) => {
  c.set("db", createDb(c.env.DB));
  await next();
});

/** The API version HCP Terraform reports in `TFP-API-Version`; go-tfe reads it from ping. */
export const TFP_API_VERSION = "2.6";

// N2a: the token is checked before routing, so unknown paths without a token are 401.
// A write may change what ./cache.ts holds (tokens, rights, no-code modules): an
// authenticated write clears it after it ran (whether it succeeded or not), so this
// isolate sees its own change at once and every other isolate within the cache's TTL
// (decision N13). The write itself may be served from the cache, like a read: what it
// sees is at most that old everywhere. A route that writes nothing cached says so
// (`rights(…, { cache: "unchanged" })`, ./route-rights.ts) and keeps the cache.
// N2b: only after the token check — an unauthenticated request (and the tokenless upload
// link, which changes nothing cached) never clears it.
nocodeApp.use("*", async (c, next) => {
  // The exemptions are data (./access/unauthenticated.ts): the module upload link (N9) and ping
  // (B12; a token sent with it is still checked); the plan page of N8 lives under /app.
  const exempt = unauthenticatedRouteOf(c.req.method, c.req.path);
  if (exempt && !(exempt.checksTokenWhenSent && bearerToken(c.req.raw.headers) !== null)) return next();
  const caller = await authenticateNocode(c.env, c.req.raw.headers, waitUntilOf(c));
  if (!caller) throw unauthorized();
  c.set("caller", caller);
  if (c.req.method === "GET" || c.req.method === "HEAD") return next();
  try {
    await next();
  } finally {
    // B18: a refused write (no right: 403/404) clears nothing.
    if (!c.get("cacheUnchanged")) clearNocodeCacheAfterWrite(c.res.status);
  }
});

nocodeApp.get(
  "/ping",
  rights({ caller: "public" }),
  operation({
    tag: "ping",
    summary: "Ping (B12): 204 with the API version; a token sent is still checked",
    answers: {
      204: {
        description: "The service is up",
        headers: { "TFP-API-Version": { description: "HCP Terraform's API version" } },
      },
    },
    errors: [401],
  }),
  (c) => c.body(null, 204, { "TFP-API-Version": TFP_API_VERSION }),
);

/** B14: the document is built once per isolate, on first request (every route is registered by then). */
let openApiJson: string | undefined;

nocodeApp.get(
  "/openapi.json",
  rights({ caller: "public" }),
  operation({
    tag: "openapi",
    summary: "This API's OpenAPI 3.1 document (B14)",
    answers: {
      200: {
        description: "OpenAPI 3.1 document",
        contentType: "application/json",
        schema: v.looseObject({ openapi: v.string() }),
      },
    },
  }),
  (c) => {
    openApiJson ??= JSON.stringify(
      buildApiV2Document(
        [
          { prefix: "/api/v2", routes: nocodeApp.routes },
          { prefix: REGISTRY_PROTOCOL_PREFIX, routes: registryProtocolApp.routes },
          { prefix: AGENT_PROTOCOL_PREFIX, routes: agentProtocolApp.routes },
          { prefix: "", routes: discoveryApp.routes },
        ],
        { version: TFP_API_VERSION },
      ),
    );
    return c.body(openApiJson, 200, { "Content-Type": "application/json" });
  },
);

// Private registry modules, versions and the tokenless upload link (N9).
nocodeApp.route("/", uploadRoutes);
nocodeApp.route("/", registryModuleRoutes(registryNoCodeHooks));
nocodeApp.route("/", versionRoutes);

nocodeApp.route("/", organizationRoutes);
nocodeApp.route("/", ssoConfigurationRoutes); // Organization single sign-on (N16)
nocodeApp.route("/", userRoutes);
nocodeApp.route("/", teamRoutes);
nocodeApp.route("/", projectRoutes);
nocodeApp.route("/", agentPoolRoutes);
nocodeApp.route("/", agentRoutes); // Agent tokens and agents (N17)
nocodeApp.route("/", releaseRoutes);
// No-code modules (E1–E3, DELETE, module variables).
nocodeApp.route("/", noCodeModuleRoutes);
// No-code workspaces, vars, runs and plans (E4, N5–N7).
nocodeApp.route("/", workspaceRoutes);
nocodeApp.route("/", workspaceLockRoutes); // Workspace locks (N20)
nocodeApp.route("/", runRoutes);
nocodeApp.route("/", stateVersionRoutes); // State versions and outputs (N20)
nocodeApp.route("/", runDataRoutes); // JSON plans and logs (N20)
nocodeApp.route("/", upgradeRoutes); // Workspace upgrades E5–E7 (N8)
nocodeApp.route("/", rolloutRoutes); // Fleet upgrades (N15)

// Feature routes are registered here, above. An authenticated request that matches none
// falls through to the root notFound, which answers 404 in JSON:API format.
