/**
 * B14: the /api/v2 OpenAPI document the real Worker serves (started with wrangler on
 * 127.0.0.1) is a valid OpenAPI 3.1 document, checked with a real validator from npm
 * (@seriousme/openapi-schema-validator, which compiles the official schema with ajv: Node
 * only, workerd refuses `new Function`). That it lists every route is checked inside
 * workerd against the route tables (test/worker/nocode/request/openapi.test.ts).
 */
import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningKeyway, startKeyway } from "../../support/worker";

type Document = { openapi: string; paths: Record<string, Record<string, unknown>> };

describe("GET /api/v2/openapi.json on the real Worker (B14)", () => {
  let keyway: RunningKeyway;
  let document: Document;
  beforeAll(async () => {
    keyway = await startKeyway();
    const res = await fetch(`${keyway.url}/api/v2/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    document = (await res.json()) as Document;
  });
  afterAll(async () => {
    await keyway?.stop();
  });

  it("is a valid OpenAPI 3.1 document", async () => {
    expect(document.openapi).toBe("3.1.0");
    const result = await new Validator().validate(structuredClone(document) as never);
    expect(result.errors ?? [], JSON.stringify(result.errors, null, 1)?.slice(0, 2000)).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it("the validator is not vacuous: a broken copy fails", async () => {
    const broken = structuredClone(document) as Record<string, unknown>;
    delete broken.info;
    expect((await new Validator().validate(broken as never)).valid).toBe(false);
    const badResponse = structuredClone(document);
    const first = Object.values(badResponse.paths)[0] as Record<string, { responses: unknown }>;
    Object.values(first)[0]!.responses = { "200": { content: {} } }; // a response without its required description
    expect((await new Validator().validate(badResponse as never)).valid).toBe(false);
  });

  it("covers /api/v2, the registry protocol and discovery, and no /app page", () => {
    const paths = Object.keys(document.paths);
    expect(paths.some((p) => p.startsWith("/api/v2/"))).toBe(true);
    expect(paths.some((p) => p.startsWith("/api/registry/v1/"))).toBe(true);
    expect(paths).toContain("/.well-known/terraform.json");
    expect(paths.filter((p) => p.startsWith("/app"))).toEqual([]);
  });
});
