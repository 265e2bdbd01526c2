/**
 * The no-code provisioning service under /api/v2 (decision B1).
 */
import { Hono } from "hono";
import { agentPoolRoutes } from "./agent-pools/routes";
import { authenticateNocode, bearerToken, waitUntilOf } from "./auth";
import { clearNocodeCache } from "./cache";
import type { NocodeEnv } from "./env";
import { rights } from "./route-rights";
import { unauthenticatedRouteOf } from "./unauthenticated";
import { renderNocodeError, unauthorized } from "./errors";
import { noCodeModuleRoutes } from "./no-code-modules/routes";
import { organizationRoutes } from "./organizations/routes";
import { projectRoutes } from "./projects/routes";
import { moduleRoutes } from "./registry/modules";
import { uploadRoutes } from "./registry/uploads";
import { versionRoutes } from "./registry/versions";
import { releaseRoutes } from "./releases/routes";
import { rolloutRoutes } from "./rollouts/routes";
import { runRoutes } from "./runs/routes";
import { teamRoutes } from "./teams/routes";
import { upgradeRoutes } from "./upgrade/routes";
import { userRoutes } from "./users/routes";
import { workspaceRoutes } from "./workspaces/routes";

export const nocodeApp = new Hono<NocodeEnv>();
nocodeApp.onError(renderNocodeError);

/** The API version HCP Terraform reports in `TFP-API-Version`; go-tfe reads it from ping. */
export const TFP_API_VERSION = "2.6";

// N2a: the token is checked before routing, so unknown paths without a token are 401.
// Any write may change what ./cache.ts holds (tokens, rights, no-code modules): an
// authenticated write clears it before and after, so this isolate sees its own writes at
// once. N2b: only after the token check — an unauthenticated request (and the tokenless
// upload link, which changes nothing cached) never clears it.
nocodeApp.use("*", async (c, next) => {
  // The exemptions are data (./unauthenticated.ts): the module upload link (N9) and ping
  // (B12; a token sent with it is still checked); the plan page of N8 lives under /app.
  const exempt = unauthenticatedRouteOf(c.req.method, c.req.path);
  if (exempt && !(exempt.checksTokenWhenSent && bearerToken(c.req.raw.headers) !== null)) return next();
  const caller = await authenticateNocode(c.env, c.req.raw.headers, waitUntilOf(c));
  if (!caller) throw unauthorized();
  c.set("caller", caller);
  if (c.req.method === "GET" || c.req.method === "HEAD") return next();
  clearNocodeCache();
  try {
    await next();
  } finally {
    clearNocodeCache();
  }
});

nocodeApp.get("/ping", rights({ caller: "public" }), (c) => c.body(null, 204, { "TFP-API-Version": TFP_API_VERSION }));

// Private registry modules, versions and the tokenless upload link (N9, issue #6 part B).
nocodeApp.route("/", uploadRoutes);
nocodeApp.route("/", moduleRoutes);
nocodeApp.route("/", versionRoutes);

nocodeApp.route("/", organizationRoutes);
nocodeApp.route("/", userRoutes);
nocodeApp.route("/", teamRoutes);
nocodeApp.route("/", projectRoutes);
nocodeApp.route("/", agentPoolRoutes);
nocodeApp.route("/", releaseRoutes);
// No-code modules (E1–E3, DELETE, module variables; issue #7).
nocodeApp.route("/", noCodeModuleRoutes);
// No-code workspaces, vars, runs and plans (E4, N5–N7; issue #7).
nocodeApp.route("/", workspaceRoutes);
nocodeApp.route("/", runRoutes);
nocodeApp.route("/", upgradeRoutes); // Workspace upgrades E5–E7 (N8; issue #8)
nocodeApp.route("/", rolloutRoutes); // Fleet upgrades (N15; issue #21)

// Feature routes are registered here, above. An authenticated request that matches none
// falls through to the root notFound, which answers 404 in JSON:API format.
