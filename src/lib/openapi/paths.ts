/**
 * Path templates and operation lookup in an OpenAPI 3.1 document (OpenAPI 3.1.0 §4.8.8
 * Paths Object, §3.2 Path Templating). Used by the document builders of both wings (route
 * patterns use `:param`, OpenAPI uses `{param}`) and by the tests that check every answer
 * against the served document.
 *
 * Matching is segment by segment, never a regular expression built from input: a `{name}`
 * segment matches exactly one non-empty path segment, and when two templates match the
 * same path the one with a literal segment first wins, as §4.8.8 requires ("When matching
 * URLs, concrete (non-templated) paths would be matched before their templated
 * counterparts").
 */
import { trimTrailing } from "../bytes";
import {
  HTTP_METHODS,
  type HttpMethod,
  isReference,
  type MediaTypeObject,
  type OpenApiDocument,
  type OperationObject,
  type PathItem,
  type ReferenceObject,
  type ResponseObject,
} from "./types";

/**
 * A route pattern with `:param` segments as an OpenAPI path template with `{param}`
 * segments, always starting with `/`: `roles/:name` → `/roles/{name}`.
 */
export function toOpenApiPath(pattern: string): string {
  const segments = pattern
    .replace(/^\/+/, "")
    .split("/")
    .map((segment) => (segment.startsWith(":") ? `{${segment.slice(1)}}` : segment));
  return `/${segments.join("/")}`;
}

/** The parameter names of a path template, in order: `/{mount}/roles/{name}` → `["mount", "name"]`. */
export function pathTemplateParameters(template: string): string[] {
  return template
    .split("/")
    .filter((segment) => isTemplateSegment(segment))
    .map((segment) => segment.slice(1, -1));
}

function isTemplateSegment(segment: string): boolean {
  return segment.length > 2 && segment.startsWith("{") && segment.endsWith("}");
}

/**
 * The parameters of `path` (a concrete path as sent, e.g. `/v1/ssh/roles/web`) when it
 * matches `template` (e.g. `/v1/{mount}/roles/{name}`), or null. Values are as sent
 * (still percent-encoded).
 */
export function matchPathTemplate(template: string, path: string): Record<string, string> | null {
  const want = template.split("/");
  const got = path.split("/");
  if (want.length !== got.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const segment = want[i]!;
    const value = got[i]!;
    if (isTemplateSegment(segment)) {
      if (value === "") return null;
      params[segment.slice(1, -1)] = value;
    } else if (segment !== value) {
      return null;
    }
  }
  return params;
}

/**
 * The path part of a server URL (§4.8.5), `""` for the root: `/v1` → `/v1`,
 * `https://host/api/v2/` → `/api/v2`. Server variables are not used by Keyway's documents.
 */
export function serverBasePath(url: string | undefined): string {
  if (!url) return "";
  const path = /^[a-z][a-z0-9+.-]*:\/\//i.test(url) ? new URL(url).pathname : url;
  return trimTrailing(path, "/");
}

/** The full path template of a Paths key: the base path of its server, then the key. */
export function fullPathTemplate(document: OpenApiDocument, key: string): string {
  const item = document.paths?.[key];
  const server = item?.servers?.[0]?.url ?? document.servers?.[0]?.url;
  return serverBasePath(server) + key;
}

/** An operation found for a method and a concrete path. */
export interface OperationMatch {
  kind: "operation";
  /** The key of the Paths Object, e.g. `/{mount}/roles/{name}`. */
  pathKey: string;
  /** The key with its server's base path, e.g. `/v1/{mount}/roles/{name}`. */
  template: string;
  method: HttpMethod;
  operation: OperationObject;
  /** JSON pointer to the operation in the document, e.g. `/paths/~1{mount}~1roles~1{name}/get`. */
  pointer: string;
  /** Path parameters as sent. */
  params: Record<string, string>;
}

/** The lookup's answer: an operation, a documented path without that method, or nothing. */
export type OperationLookup =
  | OperationMatch
  | { kind: "method-not-documented"; pathKey: string; template: string; methods: HttpMethod[] }
  | { kind: "path-not-documented" };

/**
 * The operation of `document` serving `method` on the concrete `path` (the URL's path as
 * sent, query excluded). The most specific template wins (§4.8.8).
 */
export function findOperation(document: OpenApiDocument, method: string, path: string): OperationLookup {
  let best: { key: string; template: string; params: Record<string, string> } | null = null;
  for (const key of Object.keys(document.paths ?? {})) {
    const template = fullPathTemplate(document, key);
    const params = matchPathTemplate(template, path);
    if (params && (!best || moreSpecific(template, best.template))) best = { key, template, params };
  }
  if (!best) return { kind: "path-not-documented" };
  const item = resolveLocal<PathItem>(document, document.paths![best.key]! as PathItem | ReferenceObject);
  const lower = method.toLowerCase() as HttpMethod;
  const operation = HTTP_METHODS.includes(lower) ? item[lower] : undefined;
  if (!operation) {
    return {
      kind: "method-not-documented",
      pathKey: best.key,
      template: best.template,
      methods: documentedMethods(item),
    };
  }
  return {
    kind: "operation",
    pathKey: best.key,
    template: best.template,
    method: lower,
    operation,
    pointer: jsonPointer(["paths", best.key, lower]),
    params: best.params,
  };
}

/** The methods a Path Item documents. */
export function documentedMethods(item: PathItem): HttpMethod[] {
  return HTTP_METHODS.filter((method) => item[method] !== undefined);
}

/** True when `a` has a literal segment where `b` first has a template segment. */
function moreSpecific(a: string, b: string): boolean {
  const as = a.split("/");
  const bs = b.split("/");
  for (let i = 0; i < as.length; i++) {
    const aTemplated = isTemplateSegment(as[i]!);
    const bTemplated = isTemplateSegment(bs[i] ?? "");
    if (aTemplated !== bTemplated) return !aTemplated;
  }
  return false;
}

/** The response an operation declares for a status: the exact code, then its range (`4XX`), then `default` (§4.8.16). */
export function responseForStatus(
  document: OpenApiDocument,
  operation: OperationObject,
  status: number,
): { key: string; response: ResponseObject } | null {
  for (const key of [String(status), `${String(status)[0]}XX`, "default"]) {
    const declared = operation.responses[key];
    if (declared) return { key, response: resolveLocal<ResponseObject>(document, declared) };
  }
  return null;
}

/**
 * The media type entry of a Content map for a response's Content-Type (parameters such
 * as `charset` ignored): the exact type, then `type/*`, then `*\/*` (§4.8.17.1).
 */
export function mediaTypeFor(
  content: Record<string, MediaTypeObject> | undefined,
  contentType: string | null,
): { key: string; mediaType: MediaTypeObject } | null {
  if (!content || !contentType) return null;
  const essence = contentType.split(";")[0]!.trim().toLowerCase();
  const range = `${essence.split("/")[0]}/*`;
  for (const key of [essence, range, "*/*"]) {
    const found = Object.entries(content).find(([declared]) => declared.toLowerCase() === key);
    if (found) return { key: found[0], mediaType: found[1] };
  }
  return null;
}

/**
 * Follow a local reference (`#/components/...`) until an object that is not one. The
 * fragment is a URI fragment, so percent-decoded first (`#/paths/~1%7Bmount%7D`).
 */
export function resolveLocal<T>(document: OpenApiDocument, value: T | ReferenceObject): T {
  let current: unknown = value;
  for (let hops = 0; isReference(current); hops++) {
    if (hops > 32 || !current.$ref.startsWith("#/")) throw new Error(`cannot resolve reference ${current.$ref}`);
    current = readPointer(document, decodeURIComponent(current.$ref.slice(1)));
    if (current === undefined) throw new Error(`unresolved reference ${(value as ReferenceObject).$ref}`);
  }
  return current as T;
}

/** RFC 6901 JSON pointer from unescaped reference tokens: `["paths", "/a/{b}"]` → `/paths/~1a~1{b}`. */
export function jsonPointer(tokens: readonly (string | number)[]): string {
  return tokens.map((token) => `/${String(token).replaceAll("~", "~0").replaceAll("/", "~1")}`).join("");
}

/** The value at an RFC 6901 JSON pointer, or undefined. */
export function readPointer(root: unknown, pointer: string): unknown {
  if (pointer === "") return root;
  let current = root;
  for (const raw of pointer.slice(1).split("/")) {
    const token = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    if (typeof current !== "object" || current === null || !Object.hasOwn(current, token)) return undefined;
    current = (current as Record<string, unknown>)[token];
  }
  return current;
}
