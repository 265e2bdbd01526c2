/**
 * Decision B14 (/v1 half): `GET /v1/sys/internal/specs/openapi` serves, without a token,
 * an OpenAPI 3.1 document generated from the route table, and its answer schemas are
 * precise enough that a wrong shape fails. (Node validates the document itself against
 * the OpenAPI 3.1 schema: test/interop/platform/openapi-documents.test.ts.)
 */
import { describe, expect, it } from "vitest";
import { toOpenApiPath } from "../../../../src/lib/openapi/paths";
import type { OpenApiDocument } from "../../../../src/lib/openapi/types";
import type { Operation } from "../../../../src/ssh/router";
import { vaultRoutes } from "../../../../src/ssh/routes";
import { CONTRACT_SOURCES, ContractChecker } from "../../../helpers/openapi-check";
import { vault } from "../../../helpers/vault";

const METHOD: Record<Operation, string> = {
  read: "get",
  list: "get",
  update: "post",
  patch: "patch",
  delete: "delete",
};

async function served(): Promise<OpenApiDocument> {
  const res = await vault("GET", "sys/internal/specs/openapi", { token: null });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("application/json");
  return res.json as OpenApiDocument;
}

describe("the /v1 OpenAPI document (B14)", () => {
  it("is served without a token, as OpenAPI 3.1, with this deployment's mounts", async () => {
    const document = await served();
    expect(document.openapi).toBe("3.1.0");
    expect(document.servers).toEqual([{ url: "/v1" }]);
    expect(document.paths?.["/{mount}/krl"]?.parameters?.[0]).toMatchObject({
      name: "mount",
      schema: { enum: ["ssh", "ssh-two"] },
    });
  });

  it("has every operation of the route table, and nothing else", async () => {
    const document = await served();
    const expected: string[] = [];
    for (const route of vaultRoutes) {
      const key = (route.mounted ? "/{mount}" : "") + toOpenApiPath(route.pattern);
      for (const operation of Object.keys(route.operations) as Operation[]) {
        expected.push(`${METHOD[operation]} ${key}`);
        if (operation === "update") expected.push(`put ${key}`);
        if (operation === "read" && route.head) expected.push(`head ${key}`);
        // S2b, B14a: the list with Vault's trailing slash, a path item of its own.
        if (operation === "list") expected.push(`get ${key}/`);
      }
      // A route's docs describe only operations it serves.
      expect(Object.keys(route.docs.operations).sort(), route.pattern).toEqual(Object.keys(route.operations).sort());
    }
    const documented = Object.entries(document.paths ?? {}).flatMap(([key, item]) =>
      "$ref" in item
        ? []
        : Object.keys(item)
            .filter((k) => k !== "parameters")
            .map((method) => `${method} ${key}`),
    );
    expect(documented.sort()).toEqual(expected.sort());
  });

  it("describes answers precisely enough that a wrong shape fails", async () => {
    const checker = new ContractChecker([{ source: CONTRACT_SOURCES[0]!, document: await served() }]);
    const answer = (method: string, path: string, status: number, body: unknown) => ({
      method,
      path,
      status,
      headers: new Headers({ "content-type": "application/json" }),
      text: JSON.stringify(body),
    });
    const envelope = {
      request_id: "r",
      lease_id: "",
      renewable: false,
      lease_duration: 0,
      wrap_info: null,
      warnings: null,
      auth: null,
    };
    const otpRole = {
      default_user: "u",
      cidr_list: "10.0.0.0/8",
      exclude_cidr_list: "",
      key_type: "otp",
      port: 22,
      allowed_users: "",
    };
    expect(checker.violation(answer("GET", "/v1/ssh/roles/web", 200, { ...envelope, data: otpRole }))).toBeNull();
    // A field too many, a field missing, a wrong type, a field outside the envelope.
    expect(
      checker.violation(answer("GET", "/v1/ssh/roles/web", 200, { ...envelope, data: { ...otpRole, secret: "x" } })),
    ).not.toBeNull();
    const { port: _port, ...withoutPort } = otpRole;
    expect(
      checker.violation(answer("GET", "/v1/ssh/roles/web", 200, { ...envelope, data: withoutPort })),
    ).not.toBeNull();
    expect(
      checker.violation(answer("GET", "/v1/ssh/roles/web", 200, { ...envelope, data: { ...otpRole, port: "22" } })),
    ).toContain("/data");
    expect(
      checker.violation(answer("GET", "/v1/ssh/roles/web", 200, { ...envelope, data: otpRole, extra: 1 })),
    ).not.toBeNull();
    // Errors are Vault's `{"errors": [...]}`, documented paths or not.
    expect(checker.violation(answer("GET", "/v1/ssh/roles/web", 404, { errors: [] }))).toBeNull();
    expect(checker.violation(answer("GET", "/v1/ssh/roles/web", 404, { error: "x" }))).not.toBeNull();
    expect(checker.violation(answer("GET", "/v1/ssh/nowhere", 404, { errors: ["unsupported path"] }))).toBeNull();
    // A success on a path the document lacks fails.
    expect(checker.violation(answer("GET", "/v1/ssh/nowhere", 200, { ...envelope, data: null }))).toContain(
      "no path matching",
    );
  });

  it("needs a token for any other method (S16a)", async () => {
    expect((await vault("POST", "sys/internal/specs/openapi", { token: null, body: {} })).status).toBe(403);
    expect((await vault("DELETE", "sys/internal/specs/openapi", { token: null })).status).toBe(403);
  });
});
