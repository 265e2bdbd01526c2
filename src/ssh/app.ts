/**
 * The secrets service under /v1 (decision B1): one dispatcher that applies S2a's order of
 * checks to every request, then calls the matched route's handler.
 */
import { Hono } from "hono";
import type { AppEnv } from "../app-env";
import { createDb } from "../db/client";
import { readJsonObject } from "../lib/http/body";
import { aclFor } from "./auth/acl";
import { consumeTokenUse, presentedToken, resolveToken } from "./auth/tokens";
import { badRequest, permissionDenied, renderVaultError, unsupportedOperation, unsupportedPath } from "./errors";
import { parseGoBool } from "./fields";
import { type Operation, type VaultRequest, VaultRouter, configuredMounts, requiredCapability } from "./router";
import { vaultRoutes } from "./routes";

const router = new VaultRouter(vaultRoutes);

type OperationResult = { operation: Operation } | { unsupported: true } | { badListFlag: string };

/** Reference §1.1 and S2: the operation a method (and list flag) asks for. */
function operationOf(method: string, query: URLSearchParams): OperationResult {
  switch (method) {
    case "GET": {
      const flag = query.get("list");
      if (flag === null) return { operation: "read" };
      const list = parseGoBool(flag);
      if (list === undefined) return { badListFlag: flag };
      return { operation: list ? "list" : "read" };
    }
    case "POST":
    case "PUT":
      return { operation: "update" };
    case "DELETE":
      return { operation: "delete" };
    case "PATCH":
      return { operation: "patch" };
    default:
      return { unsupported: true };
  }
}

export const secretsApp = new Hono<AppEnv>();
secretsApp.onError(renderVaultError);

secretsApp.all("/*", async (c) => {
  const url = new URL(c.req.url);
  const path = decodeURIComponent(url.pathname.replace(/^\/v1\/?/, ""));
  const mounts = configuredMounts(c.env.SSH_MOUNTS);
  const match = router.match(path, mounts);
  const op = operationOf(c.req.method, url.searchParams);
  const db = createDb(c.env.DB);
  const operation: Operation | null = "operation" in op ? op.operation : null;

  const serve = async (token: VaultRequest["token"]) => {
    if (!match) throw unsupportedPath();
    if ("badListFlag" in op) throw badRequest(`error parsing list flag: strconv.ParseBool: parsing "${op.badListFlag}": invalid syntax`);
    const handler = operation ? match.route.operations[operation] : undefined;
    if (!operation || !handler) throw unsupportedOperation();
    const body = operation === "update" || operation === "patch" ? await readJsonObject(c.req.raw) : {};
    return handler({ c, env: c.env, db, path, mount: match.mount, params: match.params, operation, token, body, query: url.searchParams });
  };

  // (1) Unauthenticated paths and methods (S16).
  if (match && operation && match.route.unauthenticated?.includes(operation)) return serve(null);

  // (2) A missing or bad token → 403, unknown paths included.
  const presented = presentedToken(c.req.raw.headers);
  const token = presented ? await resolveToken(c.env, db, presented) : null;
  if (!token) throw permissionDenied();

  // (3) The ACL (root skips it). The list path carries a trailing slash, as in Vault.
  const acl = await aclFor(db, token);
  if (acl) {
    const aclOperation: Operation = operation ?? "read";
    const aclPath = aclOperation === "list" && !path.endsWith("/") ? `${path}/` : path;
    const needed = requiredCapability(match?.route, aclOperation);
    const allowed = acl.allows(aclPath, needed) || (needed === "patch" && acl.allows(aclPath, "update"));
    if (!allowed) throw permissionDenied();
  }
  if (!(await consumeTokenUse(db, token))) throw permissionDenied();

  // (4) Routing errors, then the handler.
  return serve(token);
});
