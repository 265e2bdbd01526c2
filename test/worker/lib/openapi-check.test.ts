/**
 * The B14 answer check runs inside workerd (which refuses `new Function`, so no code-
 * generating validator would): a wrong body fails with its pointer, a right one passes.
 * The full behaviour is tested in Node (test/unit/lib/openapi/openapi-check.test.ts).
 */
import { describe, expect, it } from "vitest";
import type { OpenApiDocument } from "../../../src/lib/openapi/types";
import { ContractChecker } from "../../helpers/openapi-check";
import { servedContracts } from "../../helpers/worker-request";

const document: OpenApiDocument = {
  openapi: "3.1.0",
  info: { title: "t", version: "1" },
  servers: [{ url: "/v1" }],
  paths: {
    "/sys/thing": {
      get: {
        responses: {
          "200": {
            description: "ok",
            content: {
              "application/json": {
                schema: { type: "object", required: ["n"], properties: { n: { $ref: "#/components/schemas/N" } } },
              },
            },
          },
        },
      },
    },
  },
  components: { schemas: { N: { type: "integer", minimum: 1 } } },
};

describe("OpenAPI answer check in workerd", () => {
  const checker = new ContractChecker([{ source: { name: "/v1", documentPath: "/x", prefixes: ["/v1/"] }, document }]);
  const observe = (text: string) => ({
    method: "GET",
    path: "/v1/sys/thing",
    status: 200,
    text,
    headers: new Headers({ "content-type": "application/json" }),
  });

  it("validates with $ref and reports the pointer", () => {
    expect(checker.violation(observe('{"n":2}'))).toBeNull();
    expect(checker.violation(observe('{"n":0}'))).toContain("at /n (minimum");
  });

  it("loads the served documents once per file", async () => {
    expect(await servedContracts()).toBe(await servedContracts());
  });
});
