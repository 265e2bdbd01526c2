/**
 * Vault-style path routing for /v1 (decisions S1, S2, S2a, S6, S16).
 *
 * A route is a path pattern with the operations it supports. The dispatcher in dispatcher.ts
 * matches the path once, then applies S2a's and S2b's order: unauthenticated operations,
 * token, ACL on the path as received, and only then unknown or non-canonical path (404),
 * a path name that would need normalising (400), unsupported operation (405), bad list
 * flag (400).
 */

import type { Db } from "../db/client";
import { IsolateCache } from "../lib/isolate-cache";
import type { JsonSchema, ResponseObject } from "../lib/openapi/types";
import type { Capability } from "./access/acl-policy";
import type { TokenContext } from "./access/token-context";
import type { FieldSchema } from "./fields";

/** Vault's logical operations (Vault's method-to-operation mapping). */
export type Operation = "read" | "list" | "update" | "delete" | "patch";

/** Everything a handler needs about one request. */
export interface VaultRequest {
  /** Per-request id: Vault's `request_id`, `X-Request-Id`, and the key of log lines. */
  requestId: string;
  /** Request headers (the auth routes read the presented token from them). */
  headers: Headers;
  env: Env;
  db: Db;
  /** Path below /v1, without leading slash, e.g. `ssh/roles/web`. */
  path: string;
  /** The SSH mount the path is under, for mount routes. */
  mount: string;
  params: Record<string, string>;
  operation: Operation;
  /** Null only for unauthenticated operations (S16). */
  token: TokenContext | null;
  /** JSON body of a write (`{}` for reads); parsed within B5's limit before the handler. */
  body: Record<string, unknown>;
  query: URLSearchParams;
  /** Work that may finish after the answer (the execution context's `waitUntil`); never fails the request. */
  waitUntil: (work: Promise<unknown>) => void;
}

export type VaultHandler = (req: VaultRequest) => Promise<Response>;

export interface VaultRoute {
  /**
   * Path pattern. Segments are literals, `:name` (a role-style name, Vault's role-name
   * pattern, framework.GenericNameWithAtRegex) or `:id` style params declared in `params`. Mount
   * routes are relative to the mount.
   */
  pattern: string;
  /** True when the pattern is relative to an SSH mount (S1). */
  mounted?: boolean;
  /** Regex source per parameter; default is the role-name grammar. */
  params?: Record<string, string>;
  operations: Partial<Record<Operation, VaultHandler>>;
  /** Operations served without a token (S16, S16a). */
  unauthenticated?: Operation[];
  /** HEAD is served as a read without its body (only `sys/health`, B12); elsewhere HEAD is 405. */
  head?: boolean;
  /**
   * S26: a write here may also send an `application/x-www-form-urlencoded` body (the OAuth
   * form_post response a browser or the vault CLI posts to `oidc/callback`).
   */
  formBody?: boolean;
  /** S24: every operation here also needs `sudo` on the path (root has it), e.g. `sys/auth/:path`. */
  sudo?: boolean;
  /** S6: writes here need `create` (with or without `update`), e.g. sign and issue. */
  writeNeedsCreate?: boolean;
  /**
   * S2b: parameters whose handler would normalise the value (e.g. policy names are
   * trimmed and lower-cased). The dispatcher refuses a value that is not already in its
   * normal form with 400, before the handler reads or writes anything.
   */
  normalisedParams?: Record<string, ParamNormaliser>;
  /**
   * B14: what the OpenAPI document says of each operation (summary, the FieldSchema the
   * handler parses with, the answers). Required, so no route is served undocumented.
   */
  docs: RouteDocs;
}

/** B14: one operation of a route as the OpenAPI document describes it (openapi/document.ts). */
export interface OperationDocs {
  summary: string;
  description?: string;
  /** The fields the handler parses the JSON body with (update and patch). */
  body?: FieldSchema;
  /** Query parameters the handler reads (reads and lists), each with its description. */
  query?: Record<string, QueryParameterDocs>;
  /** Success (and not-modified) answers by status; Vault's error answers are added to every operation. */
  responses: Record<string, ResponseObject>;
}

export interface QueryParameterDocs {
  description: string;
  schema?: JsonSchema;
  required?: boolean;
}

/** What a route says about itself: one entry per operation it serves (checked by test). */
export interface RouteDocs {
  /** Descriptions of the path parameters (`:name` segments). */
  params?: Record<string, string>;
  operations: Partial<Record<Operation, OperationDocs>>;
}

/** How a handler normalises one path parameter (S2b). */
export interface ParamNormaliser {
  /** What the parameter is, for the error message, e.g. `policy name`. */
  label: string;
  /** The normal form in words, for the error message, e.g. `lower-case, without surrounding spaces`. */
  rule: string;
  /** The normal form the handler would use. */
  normalise: (value: string) => string;
}

/**
 * S2b: the 400 message for a path parameter that is not in its normal form, or null when
 * every normalised parameter of the match already is.
 */
export function nonCanonicalParam(match: RouteMatch): string | null {
  const normalisers = match.route.normalisedParams;
  if (!normalisers) return null;
  for (const [name, normaliser] of Object.entries(normalisers)) {
    const value = match.params[name];
    if (value === undefined) continue;
    const normal = normaliser.normalise(value);
    if (normal !== value) {
      return `${normaliser.label} ${JSON.stringify(value)} is not in canonical form: use ${JSON.stringify(normal)} (${normaliser.rule})`;
    }
  }
  return null;
}

/**
 * S2b: the one spelling of a request path that routes, or null when the path is spelled
 * any other way (then it is 404 `unsupported path` once the token and the ACL have been
 * checked). `raw` is the path below /v1 as sent, `decoded` its percent-decoding. An
 * encoded `/` or an empty segment never routes; a trailing slash routes only on a list
 * operation (Vault lists `roles/` as well as `roles`).
 */
export function routablePath(raw: string, decoded: string, operation: Operation | null): string | null {
  if (/%2f/i.test(raw)) return null;
  const path = operation === "list" && decoded.endsWith("/") ? decoded.slice(0, -1) : decoded;
  if (path === "" || path.startsWith("/") || path.endsWith("/") || path.includes("//")) return null;
  return path;
}

/** Vault's role-name grammar `\w(([\w-.@]+)?\w)?` (sdk/framework's GenericNameWithAtRegex). */
export const NAME_PATTERN = "\\w(?:[\\w\\-.@]*\\w)?";

interface CompiledRoute {
  route: VaultRoute;
  regex: RegExp;
  names: string[];
}

export interface RouteMatch {
  route: VaultRoute;
  params: Record<string, string>;
  mount: string;
}

/** Parsed SSH_MOUNTS values (server configuration: one entry in practice). */
const mountsCache = new IsolateCache<string[]>({ name: "ssh-mounts", maxEntries: 4 });

/**
 * Mount names from SSH_MOUNTS (S1); invalid or reserved names are ignored. Read at
 * request time, parsed once per distinct value.
 */
export function configuredMounts(value: string | undefined): string[] {
  const key = value ?? "ssh";
  let mounts = mountsCache.peek(key);
  if (!mounts) {
    mounts = parseMounts(key);
    mountsCache.set(key, mounts);
  }
  return mounts;
}

function parseMounts(value: string): string[] {
  const mounts = value
    .split(",")
    .map((m) => m.trim())
    .filter((m) => /^[a-z0-9][a-z0-9_-]*$/.test(m) && !["sys", "auth", "identity"].includes(m));
  return mounts.length > 0 ? [...new Set(mounts)] : ["ssh"];
}

/** A compiled route table. */
export class VaultRouter {
  private readonly mounted: CompiledRoute[] = [];
  private readonly global: CompiledRoute[] = [];
  /** Routes without parameters by their exact path: one Map lookup instead of a regex scan. */
  private readonly mountedLiterals = new Map<string, CompiledRoute>();
  private readonly globalLiterals = new Map<string, CompiledRoute>();

  constructor(routes: VaultRoute[]) {
    for (const route of routes) {
      const names: string[] = [];
      const source = route.pattern
        .split("/")
        .map((segment) => {
          if (!segment.startsWith(":")) return segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
          const name = segment.slice(1);
          names.push(name);
          return `(${route.params?.[name] ?? NAME_PATTERN})`;
        })
        .join("/");
      // Exactly one spelling (S2b): the dispatcher strips a list's trailing slash before matching.
      // lint-regex: built from the route table's constants: literal segments and parameter patterns joined by `/`, anchored.
      const compiled = { route, regex: new RegExp(`^${source}$`), names };
      const table = route.mounted ? this.mounted : this.global;
      // The first route in table order wins, so a literal is indexed only when no route
      // listed before it also matches its path (otherwise the scan finds that one).
      const literals = route.mounted ? this.mountedLiterals : this.globalLiterals;
      if (names.length === 0 && !table.some((earlier) => earlier.regex.test(route.pattern))) {
        literals.set(route.pattern, compiled);
      }
      table.push(compiled);
    }
  }

  /** Match a /v1-relative path. */
  match(path: string, mounts: string[]): RouteMatch | null {
    const slash = path.indexOf("/");
    const first = slash === -1 ? path : path.slice(0, slash);
    if (mounts.includes(first)) {
      const rest = slash === -1 ? "" : path.slice(slash + 1);
      return this.find(this.mounted, this.mountedLiterals, rest, first);
    }
    return this.find(this.global, this.globalLiterals, path, "");
  }

  private find(
    table: CompiledRoute[],
    literals: Map<string, CompiledRoute>,
    path: string,
    mount: string,
  ): RouteMatch | null {
    const literal = literals.get(path);
    if (literal) return { route: literal.route, params: {}, mount };
    for (const compiled of table) {
      const m = compiled.regex.exec(path);
      if (!m) continue;
      const params: Record<string, string> = {};
      compiled.names.forEach((name, i) => {
        params[name] = m[i + 1]!;
      });
      return { route: compiled.route, params, mount };
    }
    return null;
  }
}

/** S6: the capability an operation needs on a route. */
export function requiredCapability(route: VaultRoute | undefined, operation: Operation): Capability {
  switch (operation) {
    case "read":
      return "read";
    case "list":
      return "list";
    case "delete":
      return "delete";
    case "patch":
      return "patch";
    case "update":
      return route?.writeNeedsCreate ? "create" : "update";
  }
}
