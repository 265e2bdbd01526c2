/**
 * B14: `GET /api/v2/openapi.json` is served by the Worker without a token (N2a's list of
 * exemptions, src/nocode/access/unauthenticated.ts), whatever token is sent, and describes the
 * routes the Worker answers: every route of the route tables, no other. Its validity as
 * OpenAPI 3.1 is checked in Node (test/interop/nocode/openapi-document.test.ts: the
 * validator compiles schemas, which workerd refuses).
 */
import { describe, expect, it } from "vitest";
import { UNAUTHENTICATED_ROUTES } from "../../../../src/nocode/access/unauthenticated";
import { AGENT_PROTOCOL_PREFIX, agentProtocolApp } from "../../../../src/nocode/agents/protocol-routes";
import { nocodeApp } from "../../../../src/nocode/app";
import { discoveryApp } from "../../../../src/nocode/discovery/routes";
import { REGISTRY_PROTOCOL_PREFIX, registryProtocolApp } from "../../../../src/nocode/registry/protocol-routes";
import { openApiPath } from "../../../../src/nocode/request/openapi";
import { bootstrapOrg, tfe } from "../../../helpers/nocode";
import { workerRequest } from "../../../helpers/worker-request";

describe("GET /api/v2/openapi.json", () => {
  it("answers 200 with the document, without a token and with a bad one", async () => {
    for (const token of [null, "not-a-token"]) {
      const res = await tfe("GET", "openapi.json", { token });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^application\/json/);
      expect(res.json.openapi).toBe("3.1.0");
      expect(Object.keys(res.json.paths)).toEqual(
        expect.arrayContaining(["/api/v2/organizations", "/.well-known/terraform.json"]),
      );
      expect(Object.keys(res.json.paths).some((p) => p.startsWith("/app"))).toBe(false);
    }
  });

  it("is not a way around the token for its neighbours", async () => {
    expect((await tfe("GET", "openapi.json/x", { token: null })).status).toBe(401);
    expect((await tfe("POST", "openapi.json", { token: null, body: {} })).status).toBe(401);
  });

  it("describes what service discovery answers", async () => {
    const doc = (await tfe("GET", "openapi.json", { token: null })).json;
    const discovery = await workerRequest("http://keyway.test/.well-known/terraform.json", { method: "GET" });
    expect(discovery.status).toBe(200);
    const schema = doc.paths["/.well-known/terraform.json"].get.responses["200"].content["application/json"].schema;
    expect(Object.keys(schema.properties).sort()).toEqual(Object.keys(discovery.json as object).sort());
  });
});

/** Every route of a table as `METHOD /full/{path}`. */
function routesOf(prefix: string, routes: readonly { method: string; path: string }[]): string[] {
  return [
    ...new Set(
      routes
        .filter((r) => r.method !== "ALL")
        .map((r) => `${r.method} ${openApiPath(prefix + (r.path === "/" ? "" : r.path))}`),
    ),
  ];
}

describe("the document and the route tables", () => {
  it("lists every route of /api/v2, the registry and agent protocols and discovery, and nothing else", async () => {
    const doc = (await tfe("GET", "openapi.json", { token: null })).json as {
      paths: Record<string, Record<string, unknown>>;
    };
    const documented = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
    );
    const expected = [
      ...routesOf("/api/v2", nocodeApp.routes),
      ...routesOf(REGISTRY_PROTOCOL_PREFIX, registryProtocolApp.routes),
      ...routesOf(AGENT_PROTOCOL_PREFIX, agentProtocolApp.routes),
      ...routesOf("", discoveryApp.routes),
    ];
    expect(expected.length).toBeGreaterThan(40);
    expect(documented.sort()).toEqual(expected.sort());
  });

  it("describes every route (B14): no operation is left without its answers", async () => {
    const doc = (await tfe("GET", "openapi.json", { token: null })).json as {
      paths: Record<string, Record<string, Record<string, unknown>>>;
    };
    const undescribed = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([, operation]) => operation["x-keyway-undescribed"] === true)
        .map(([method]) => `${method.toUpperCase()} ${path}`),
    );
    expect(undescribed).toEqual([]);
  });

  it("marks exactly the routes needing no token as such", async () => {
    const doc = (await tfe("GET", "openapi.json", { token: null })).json as {
      paths: Record<string, Record<string, { security?: unknown[] }>>;
    };
    const open = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([, op]) => Array.isArray(op.security) && op.security.length === 0)
        .map(([method]) => `${method.toUpperCase()} ${path}`),
    );
    const exempt = UNAUTHENTICATED_ROUTES.flatMap((r) =>
      routesOf("/api/v2", nocodeApp.routes).filter((route) => {
        const [method, path] = route.split(" ") as [string, string];
        return (r.method === "*" || r.method === method) && path === openApiPath(r.path);
      }),
    );
    expect(open.sort()).toEqual(
      [
        ...exempt,
        "GET /.well-known/terraform.json",
        "GET /api/registry/v1/modules/{org}/{name}/{provider}/{version}/archive",
      ].sort(),
    );
  });
});

describe("the one pager on every list (docs/api-v2-errors.md)", () => {
  it("refuses a page parameter that does not read with 400 naming it, on the registry list too", async () => {
    const { org, ownerToken } = await bootstrapOrg();
    for (const list of [
      `organizations/${org}/registry-modules`,
      `organizations/${org}/projects`,
      `organizations/${org}/teams`,
    ]) {
      for (const [parameter, value] of [
        ["page[size]", "abc"],
        ["page[number]", "0"],
      ] as const) {
        const res = await tfe("GET", `${list}?${parameter}=${value}`, { token: ownerToken });
        expect(res.status, `${list} ${parameter}=${value}`).toBe(400);
        expect(res.json.errors[0]).toMatchObject({ status: "400", title: "bad request", source: { parameter } });
      }
      const capped = await tfe("GET", `${list}?page[size]=500`, { token: ownerToken });
      expect(capped.status).toBe(200);
      expect(capped.json.meta.pagination["page-size"]).toBe(100);
    }
  });
});
