/**
 * The no-code provisioning service under /api/v2 (decision B1).
 */
import { Hono } from "hono";
import type { AppEnv } from "../app-env";
import { agentPoolRoutes } from "./agent-pools/routes";
import { authenticateNocode, type NocodeCaller } from "./auth";
import { clearNocodeCache } from "./cache";
import { renderNocodeError, unauthorized } from "./errors";
import { noCodeModuleRoutes } from "./no-code-modules";
import { organizationRoutes } from "./organizations/routes";
import { projectRoutes } from "./projects/routes";
import { registryRoutes } from "./registry";
import { releaseRoutes } from "./releases/routes";
import { rolloutRoutes } from "./rollouts/routes";
import { runRoutes } from "./runs";
import { teamRoutes } from "./teams/routes";
import { upgradeRoutes } from "./upgrade/routes";
import { userRoutes } from "./users/routes";
import { workspaceRoutes } from "./workspaces";

export type NocodeEnv = AppEnv & { Variables: AppEnv["Variables"] & { caller: NocodeCaller } };

export const nocodeApp = new Hono<NocodeEnv>();
nocodeApp.onError(renderNocodeError);

/**
 * N2a: paths that carry their own credential and skip the token check. The module
 * upload link (N9) is the only one under /api/v2 (the plan page of N8 lives under /app).
 */
const TOKENLESS_PREFIXES = ["/api/v2/uploads/"];

// Any write may change what ./cache.ts holds (tokens, rights, no-code modules): clear it
// before and after, so this isolate sees its own writes at once.
nocodeApp.use("*", async (c, next) => {
  if (c.req.method === "GET" || c.req.method === "HEAD") return next();
  clearNocodeCache();
  await next();
  clearNocodeCache();
});

// N2a: the token is checked before routing, so unknown paths without a token are 401.
nocodeApp.use("*", async (c, next) => {
  if (TOKENLESS_PREFIXES.some((prefix) => c.req.path.startsWith(prefix))) return next();
  const caller = await authenticateNocode(c.env, c.req.raw.headers);
  if (!caller) throw unauthorized();
  c.set("caller", caller);
  await next();
});

nocodeApp.get("/ping", (c) => c.body(null, 204));

// Private registry modules, versions and the tokenless upload link (N9, issue #6 part B).
nocodeApp.route("/", registryRoutes);

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
