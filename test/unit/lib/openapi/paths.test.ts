import { describe, expect, it } from "vitest";
import {
  findOperation,
  jsonPointer,
  matchPathTemplate,
  mediaTypeFor,
  pathTemplateParameters,
  readPointer,
  responseForStatus,
  serverBasePath,
  toOpenApiPath,
} from "../../../../src/lib/openapi/paths";
import type { OpenApiDocument } from "../../../../src/lib/openapi/types";

const ok = { description: "ok" };
const doc: OpenApiDocument = {
  openapi: "3.1.0",
  info: { title: "t", version: "1" },
  servers: [{ url: "/v1" }],
  paths: {
    "/{mount}/roles/{name}": { get: { operationId: "readRole", responses: { "200": ok } } },
    "/{mount}/roles/default": {
      get: { operationId: "readDefault", responses: { "200": ok, "4XX": { $ref: "#/components/responses/E" } } },
    },
    "/sys/health": { get: { responses: { default: ok } }, head: { responses: { "200": ok } } },
  },
  components: { responses: { E: { description: "error" } } },
};

describe("path templates", () => {
  it("turns route patterns into OpenAPI templates", () => {
    expect(toOpenApiPath("roles/:name")).toBe("/roles/{name}");
    expect(toOpenApiPath("/sys/health")).toBe("/sys/health");
    expect(pathTemplateParameters("/{mount}/issuer/{issuer_ref}/public_key")).toEqual(["mount", "issuer_ref"]);
  });

  it("matches one non-empty segment per parameter", () => {
    expect(matchPathTemplate("/v1/{mount}/roles/{name}", "/v1/ssh/roles/web")).toEqual({ mount: "ssh", name: "web" });
    expect(matchPathTemplate("/v1/{mount}/roles/{name}", "/v1/ssh/roles/")).toBeNull();
    expect(matchPathTemplate("/v1/{mount}/roles/{name}", "/v1/ssh/roles/a/b")).toBeNull();
    expect(matchPathTemplate("/v1/sys/health", "/v1/sys/healthz")).toBeNull();
  });

  it("reads server base paths", () => {
    expect(serverBasePath("/v1")).toBe("/v1");
    expect(serverBasePath("https://example.test/api/v2/")).toBe("/api/v2");
    expect(serverBasePath(undefined)).toBe("");
  });
});

describe("findOperation", () => {
  it("prefers the concrete path over a templated one", () => {
    const found = findOperation(doc, "GET", "/v1/ssh/roles/default");
    expect(found.kind === "operation" && found.operation.operationId).toBe("readDefault");
    const other = findOperation(doc, "get", "/v1/ssh/roles/web");
    expect(other.kind === "operation" && other.operation.operationId).toBe("readRole");
    expect(other.kind === "operation" && other.pointer).toBe("/paths/~1{mount}~1roles~1{name}/get");
  });

  it("tells an undocumented method from an undocumented path", () => {
    expect(findOperation(doc, "DELETE", "/v1/sys/health")).toMatchObject({
      kind: "method-not-documented",
      methods: ["get", "head"],
    });
    expect(findOperation(doc, "GET", "/v1/nope")).toEqual({ kind: "path-not-documented" });
    expect(findOperation(doc, "GET", "/sys/health")).toEqual({ kind: "path-not-documented" });
  });

  it("finds the response for a status: exact, range, default; and follows references", () => {
    const found = findOperation(doc, "GET", "/v1/ssh/roles/default");
    if (found.kind !== "operation") throw new Error("not found");
    expect(responseForStatus(doc, found.operation, 200)?.key).toBe("200");
    expect(responseForStatus(doc, found.operation, 404)).toEqual({ key: "4XX", response: { description: "error" } });
    expect(responseForStatus(doc, found.operation, 500)).toBeNull();
    const health = findOperation(doc, "GET", "/v1/sys/health");
    if (health.kind !== "operation") throw new Error("not found");
    expect(responseForStatus(doc, health.operation, 503)?.key).toBe("default");
  });

  it("picks media types by essence, then range", () => {
    const content = { "application/json": {}, "text/*": {} };
    expect(mediaTypeFor(content, "application/json; charset=utf-8")?.key).toBe("application/json");
    expect(mediaTypeFor(content, "text/plain")?.key).toBe("text/*");
    expect(mediaTypeFor(content, "application/octet-stream")).toBeNull();
    expect(mediaTypeFor(content, null)).toBeNull();
  });

  it("writes and reads RFC 6901 pointers", () => {
    expect(jsonPointer(["paths", "/a~b/{c}", 0])).toBe("/paths/~1a~0b~1{c}/0");
    expect(readPointer({ paths: { "/a~b/{c}": ["x"] } }, "/paths/~1a~0b~1{c}/0")).toBe("x");
    expect(readPointer({}, "/missing")).toBeUndefined();
  });
});
