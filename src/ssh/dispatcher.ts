/**
 * The secrets service under /v1 (decision B1): one dispatcher that applies S2a's order of
 * checks to every request, then calls the matched route's handler.
 */
import { createDb } from "../db/client";
import { isFormBody, readFormObject, readJsonObject } from "../lib/http/body";
import { incomingRequestId, REQUEST_ID_HEADER, type RequestRecord } from "../lib/http/request-id";
import { aclFor } from "./access/acl";
import { addressInCidrs } from "./access/bound-cidrs";
import { consumeTokenUse, presentedToken, resolveCallerToken } from "./access/tokens";
import { badRequest, permissionDenied, renderVaultError, unsupportedOperation, unsupportedPath } from "./errors";
import { parseGoBool } from "./fields";
import {
  configuredMounts,
  nonCanonicalParam,
  type Operation,
  requiredCapability,
  routablePath,
  type VaultRequest,
  type VaultRoute,
  VaultRouter,
} from "./router";
import { vaultRoutes } from "./routes";
import { rewriteStoredKeysOnce } from "./stored-keys";

const router = new VaultRouter(vaultRoutes);

type OperationResult = { operation: Operation } | { unsupported: true } | { badListFlag: string };

/**
 * Vault's method-to-operation mapping and S2: the operation a method (and list flag) asks for. HEAD is a read
 * only on a route that allows it (`sys/health`, B12).
 */
function operationOf(method: string, query: URLSearchParams, route: VaultRoute | undefined): OperationResult {
  switch (method) {
    case "HEAD":
      return route?.head ? { operation: "read" } : { unsupported: true };
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

/**
 * Serve one /v1 request. This is a plain function, not a Hono app: every /v1 path goes
 * through the one dispatcher below, so Hono's routing and context would only add cost on
 * the hot unauthenticated paths (`verify`, `public_key`). Every answer, errors included,
 * carries `X-Request-Id` (the entry point's `record.id`, B15). `record.route` receives the
 * matched route's pattern for the access log.
 */
export async function serveSecrets(
  request: Request,
  env: Env,
  record: RequestRecord = { id: incomingRequestId(request.headers), route: null },
  ctx?: Pick<ExecutionContext, "waitUntil">,
): Promise<Response> {
  const requestId = record.id;
  let response: Response;
  const waitUntil = (work: Promise<unknown>) => (ctx ? ctx.waitUntil(work) : void work.catch(() => {}));
  rewriteStoredKeysOnce(env, waitUntil);
  try {
    response = await dispatch(request, env, new URL(request.url), requestId, record, waitUntil);
  } catch (err) {
    response = renderVaultError(err, requestId);
  }
  // HEAD (sys/health, B12) answers the status and headers of the read, without its body.
  if (request.method === "HEAD") response = new Response(null, response);
  response.headers.set(REQUEST_ID_HEADER, requestId);
  return response;
}

/**
 * True when an absolute URL's path is `/v1` or below it: the requests serveSecrets serves.
 * Reads the string instead of parsing a URL, since every request of both APIs asks.
 */
export function isSecretsUrl(url: string): boolean {
  const pathStart = url.indexOf("/", url.indexOf("://") + 3);
  if (pathStart < 0 || !url.startsWith("/v1", pathStart)) return false;
  const next = url.charAt(pathStart + 3);
  return next === "" || next === "/" || next === "?" || next === "#";
}

async function dispatch(
  request: Request,
  env: Env,
  url: URL,
  requestId: string,
  record: RequestRecord,
  waitUntil: VaultRequest["waitUntil"],
): Promise<Response> {
  const rawPath = url.pathname.replace(/^\/v1\/?/, "");
  // The path as received (percent-decoded): what the ACL is checked against (S2b).
  const path = decodedPath(rawPath);
  // Only GET can list, so the route is needed only to tell whether HEAD is served (B12).
  const byMethod = operationOf(request.method, url.searchParams, undefined);
  // S2b: only the one canonical spelling routes; any other is 404 after the token and ACL.
  const routed = routablePath(rawPath, path, "operation" in byMethod ? byMethod.operation : null);
  const match = routed === null ? null : router.match(routed, configuredMounts(env.SSH_MOUNTS));
  // The pattern, never the path: a path may carry a token (auth/token/lookup/:token…).
  if (match)
    record.route = match.route.mounted ? `/v1/${match.mount}/${match.route.pattern}` : `/v1/${match.route.pattern}`;
  const op = request.method === "HEAD" ? operationOf(request.method, url.searchParams, match?.route) : byMethod;
  const operation: Operation | null = "operation" in op ? op.operation : null;
  const db = createDb(env.DB);

  const serve = async (token: VaultRequest["token"]) => {
    if (!match) throw unsupportedPath();
    const nonCanonical = nonCanonicalParam(match);
    if (nonCanonical !== null) throw badRequest(nonCanonical);
    if ("badListFlag" in op)
      throw badRequest(`error parsing list flag: strconv.ParseBool: parsing "${op.badListFlag}": invalid syntax`);
    const handler = operation ? match.route.operations[operation] : undefined;
    if (!operation || !handler) throw unsupportedOperation();
    const writes = operation === "update" || operation === "patch";
    const body = !writes
      ? {}
      : match.route.formBody && isFormBody(request.headers)
        ? await readFormObject(request)
        : await readJsonObject(request);
    return handler({
      requestId,
      headers: request.headers,
      env,
      db,
      path: routed ?? path,
      mount: match.mount,
      params: match.params,
      operation,
      token,
      body,
      query: url.searchParams,
      waitUntil,
    });
  };

  // (1) Unauthenticated paths and methods (S16).
  if (match && operation && match.route.unauthenticated?.includes(operation)) return serve(null);

  // (2) A missing or bad token → 403, unknown paths included.
  const presented = presentedToken(request.headers);
  const token = presented ? await resolveCallerToken(env, db, presented) : null;
  if (!token) throw permissionDenied();
  // S25: a token bound to CIDR blocks is refused from any other client address, on every use.
  if (token.boundCidrs !== null && !addressInCidrs(request.headers.get("CF-Connecting-IP"), token.boundCidrs))
    throw permissionDenied();

  // (3) The ACL (root skips it) on the path as received, whether or not it routes (S2b).
  // The list path carries a trailing slash, as in Vault.
  const acl = await aclFor(db, token);
  if (acl) {
    const aclOperation: Operation = operation ?? "read";
    const aclPath = aclOperation === "list" && !path.endsWith("/") ? `${path}/` : path;
    const needed = requiredCapability(match?.route, aclOperation);
    const allowed =
      (acl.allows(aclPath, needed) || (needed === "patch" && acl.allows(aclPath, "update"))) &&
      (!match?.route.sudo || acl.allows(aclPath, "sudo"));
    if (!allowed) throw permissionDenied();
  }
  if (!(await consumeTokenUse(db, token))) throw permissionDenied();

  // (4) Routing errors, then the handler.
  return serve(token);
}

/** The path below /v1, percent-decoded; a malformed escape is the caller's error (400). */
function decodedPath(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw badRequest("malformed percent-encoding in the request path");
  }
}
