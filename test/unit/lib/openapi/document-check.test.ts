/** The Node-side document check (test/helpers/openapi-document-check.ts) must catch broken documents. */
import { describe, expect, it } from "vitest";
import type { OpenApiDocument } from "../../../../src/lib/openapi/types";
import { openApiDocumentProblems } from "../../../helpers/openapi-document-check";

const valid: OpenApiDocument = {
  openapi: "3.1.0",
  info: { title: "t", version: "1" },
  paths: {
    "/roles/{name}": {
      parameters: [{ name: "name", in: "path", required: true, schema: { type: "string" } }],
      get: {
        operationId: "readRole",
        responses: {
          "200": { description: "ok", content: { "application/json": { schema: { $ref: "#/components/schemas/R" } } } },
        },
      },
    },
    "/roles/": { $ref: "#/paths/~1roles~1%7Bname%7D" },
  },
  components: { schemas: { R: { type: "object" } } },
};

describe("openApiDocumentProblems", () => {
  it("accepts a valid document", async () => {
    expect(await openApiDocumentProblems(valid)).toEqual([]);
  });

  it("reports what the OpenAPI schema refuses, and what it cannot see", async () => {
    const broken = structuredClone(valid) as unknown as {
      paths: Record<string, Record<string, unknown>>;
      openapi: string;
    };
    broken.paths["/roles/{name}"]!.get = { operationId: "readRole", responses: { "200": { content: {} } } };
    expect((await openApiDocumentProblems(broken as unknown as OpenApiDocument)).join("\n")).toContain(
      "not a valid OpenAPI document",
    );

    const dangling = structuredClone(valid);
    dangling.components = {};
    expect(await openApiDocumentProblems(dangling)).toContainEqual(
      expect.stringContaining("unresolved $ref #/components/schemas/R"),
    );

    const undeclared = structuredClone(valid);
    delete undeclared.paths!["/roles/{name}"]!.parameters;
    expect(await openApiDocumentProblems(undeclared)).toContain(
      "GET /roles/{name}: path parameter {name} is not declared",
    );

    const old = { ...structuredClone(valid), openapi: "3.0.3" };
    expect((await openApiDocumentProblems(old))[0]).toBe("openapi is 3.0.3, not 3.1.x");
  });
});
