/**
 * The B14 answer check itself (test/helpers/openapi-check.ts): it must fail on every kind
 * of mismatch, or the worker tests that rely on it prove nothing.
 */
import { describe, expect, it } from "vitest";
import type { OpenApiDocument } from "../../../../src/lib/openapi/types";
import { ContractChecker, type ContractSource } from "../../../helpers/openapi-check";

const source: ContractSource = {
  name: "/v1",
  documentPath: "/v1/spec",
  prefixes: ["/v1/"],
  unroutedErrorResponse: "Error",
};
const document: OpenApiDocument = {
  openapi: "3.1.0",
  info: { title: "t", version: "1" },
  servers: [{ url: "/v1" }],
  paths: {
    "/{mount}/roles/{name}": {
      get: {
        operationId: "readRole",
        responses: {
          "200": {
            description: "role",
            content: {
              "application/json": {
                schema: {
                  type: "object",
                  required: ["data"],
                  properties: { data: { $ref: "#/components/schemas/Role" } },
                },
              },
            },
          },
          "4XX": { $ref: "#/components/responses/Error" },
        },
      },
      delete: { responses: { "204": { description: "deleted" } } },
    },
    "/{mount}/krl": {
      get: {
        responses: {
          "200": {
            description: "krl",
            headers: { ETag: { required: true, schema: { type: "string" } } },
            content: {
              "application/octet-stream": { schema: { type: "string", contentMediaType: "application/octet-stream" } },
            },
          },
          "304": { description: "not modified" },
        },
      },
    },
    "/sys/health": {
      get: {
        responses: {
          default: {
            description: "any status",
            content: {
              "application/json": {
                schema: {
                  anyOf: [
                    { $ref: "#/components/schemas/Role" },
                    { $ref: "#/components/responses/Error/content/application~1json/schema" },
                  ],
                },
              },
            },
          },
        },
      },
    },
    "/{mount}/public_key": {
      get: {
        responses: {
          "200": { description: "key", content: { "text/plain": { schema: { type: "string", pattern: "^ssh-" } } } },
        },
      },
    },
  },
  components: {
    schemas: {
      Role: {
        type: "object",
        additionalProperties: false,
        required: ["key_type", "ttl"],
        properties: {
          key_type: { enum: ["ca", "otp"] },
          ttl: { type: "integer" },
          principals: { type: "array", items: { type: "string" } },
        },
      },
    },
    responses: {
      Error: {
        description: "error",
        content: {
          "application/json": {
            schema: {
              type: "object",
              required: ["errors"],
              additionalProperties: false,
              properties: { errors: { type: "array", items: { type: "string" } } },
            },
          },
        },
      },
    },
  },
};

const json = (value: unknown) => JSON.stringify(value);
function answer(method: string, path: string, status: number, text: string, headers: Record<string, string> = {}) {
  return { method, path, status, text, headers: new Headers({ "content-type": "application/json", ...headers }) };
}

describe("ContractChecker", () => {
  const checker = new ContractChecker([{ source, document }]);

  it("accepts an answer that matches its operation", () => {
    expect(
      checker.violation(answer("GET", "/v1/ssh/roles/web", 200, json({ data: { key_type: "ca", ttl: 0 } }))),
    ).toBeNull();
    expect(checker.violation(answer("GET", "/v1/ssh/roles/web", 404, json({ errors: [] })))).toBeNull();
    expect(checker.violation(answer("DELETE", "/v1/ssh/roles/web", 204, ""))).toBeNull();
  });

  it("names the operation, the status and the pointer of a wrong body", () => {
    const v = checker.violation(answer("GET", "/v1/ssh/roles/web", 200, json({ data: { key_type: "ca", ttl: "0s" } })));
    expect(v).toContain("GET /v1/ssh/roles/web → 200");
    expect(v).toContain("readRole");
    expect(v).toContain("/data/ttl");
    expect(
      checker.violation(answer("GET", "/v1/ssh/roles/web", 200, json({ data: { key_type: "ca", ttl: 1, extra: 1 } }))),
    ).toContain("/data");
    expect(
      checker.violation(answer("GET", "/v1/ssh/roles/web", 200, json({ data: { key_type: "x", ttl: 1 } }))),
    ).toContain("/data/key_type");
    expect(checker.violation(answer("GET", "/v1/ssh/roles/web", 200, "not json"))).toContain("not JSON");
  });

  it("fails an undeclared status, content type, a missing or unexpected body, a missing header", () => {
    expect(checker.violation(answer("GET", "/v1/ssh/roles/web", 500, json({ errors: ["x"] })))).toContain(
      "status 500 is not declared",
    );
    expect(
      checker.violation(answer("GET", "/v1/ssh/roles/web", 200, json({ data: {} }), { "content-type": "text/html" })),
    ).toContain("content type text/html");
    expect(checker.violation(answer("DELETE", "/v1/ssh/roles/web", 204, "{}"))).toContain("declares no body");
    expect(
      checker.violation(answer("GET", "/v1/ssh/krl", 200, "KRL", { "content-type": "application/octet-stream" })),
    ).toContain("ETag");
    expect(
      checker.violation(
        answer("GET", "/v1/ssh/krl", 200, "KRL", { "content-type": "application/octet-stream", etag: '"1"' }),
      ),
    ).toBeNull();
    expect(checker.violation(answer("GET", "/v1/ssh/krl", 304, "", { etag: '"1"' }))).toBeNull();
    expect(
      checker.violation(
        answer("GET", "/v1/ssh/public_key", 200, "ssh-ed25519 AAAA\n", { "content-type": "text/plain" }),
      ),
    ).toBeNull();
    expect(
      checker.violation(answer("GET", "/v1/ssh/public_key", 200, "garbage", { "content-type": "text/plain" })),
    ).toContain("pattern");
  });

  it("fails a success on an undocumented path or method, and checks undocumented errors against the error shape", () => {
    expect(checker.violation(answer("GET", "/v1/ssh/secret", 200, json({})))).toContain("no path matching");
    expect(checker.violation(answer("POST", "/v1/ssh/roles/web", 200, json({})))).toContain(
      "documents only GET, DELETE",
    );
    expect(checker.violation(answer("GET", "/v1/ssh/secret", 404, json({ errors: ["unsupported path"] })))).toBeNull();
    expect(checker.violation(answer("GET", "/v1/ssh/secret", 404, json({ error: "unsupported path" })))).toContain(
      'required property "errors"',
    );
  });

  it("validates a `default` response (a JSON Schema keyword's name) and follows its references", () => {
    expect(
      checker.violation(answer("GET", "/v1/sys/health", 299, json({ errors: ["storage unavailable"] }))),
    ).toBeNull();
    expect(checker.violation(answer("GET", "/v1/sys/health", 429, json({ key_type: "ca", ttl: 1 })))).toBeNull();
    const v = checker.violation(answer("GET", "/v1/sys/health", 503, json({ errors: "storage unavailable" })));
    expect(v).toContain("/paths/~1sys~1health/get/responses/default/content/application~1json/schema");
  });

  it("leaves paths no loaded document covers alone", () => {
    expect(checker.covers("/api/v2/ping")).toBe(false);
    expect(checker.violation(answer("GET", "/api/v2/ping", 200, "anything"))).toBeNull();
  });
});
