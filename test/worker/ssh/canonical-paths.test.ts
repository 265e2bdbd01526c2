/**
 * Decision S2b: every /v1 path has exactly one spelling, and the ACL is
 * checked against exactly the path the handler serves. The requests of the outside
 * review: a trailing slash signed from a denied role, `config/ca/`, and policy names in
 * another case or with spaces rewriting a denied policy. (The whole class is covered by
 * authorization-matrix.test.ts.)
 */
import { beforeAll, describe, expect, it } from "vitest";
import { tokenWithPolicy, uniqueName, vault } from "../../helpers/vault";
import { workerRequest } from "../../helpers/worker-request";
import { CA_KEYS, SUBJECT_KEYS } from "./ca-fixtures";

/** A request with the path exactly as given (the vault() helper drops a leading slash). */
function raw(method: string, path: string, token: string | null, body?: unknown) {
  return workerRequest(`http://keyway.test/v1/${path}`, {
    method,
    headers: { ...(token ? { "X-Vault-Token": token } : {}), ...(body ? { "Content-Type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
}

const ADMIN_ROLE = uniqueName("admin");
const USER_ROLE = uniqueName("user");

beforeAll(async () => {
  const ca = await vault("POST", "ssh/config/ca", {
    body: { private_key: CA_KEYS.ed25519.privateKey, public_key: CA_KEYS.ed25519.publicKey },
  });
  expect(ca.status).toBe(204);
  for (const role of [ADMIN_ROLE, USER_ROLE]) {
    const res = await vault("POST", `ssh/roles/${role}`, {
      body: { key_type: "ca", allow_user_certificates: true, allowed_users: "*", default_user: "root" },
    });
    expect(res.status).toBe(204);
  }
});

describe("S2b: a trailing slash does not get around a deny", () => {
  it("signs nothing from a denied role through `sign/<role>/`, `sign//<role>` or `sign%2F<role>`", async () => {
    const token = await tokenWithPolicy({ "ssh/sign/*": ["create", "update"], [`ssh/sign/${ADMIN_ROLE}`]: ["deny"] });
    const body = { public_key: SUBJECT_KEYS.ed25519, valid_principals: "root" };
    expect((await raw("POST", `ssh/sign/${USER_ROLE}`, token, body)).status).toBe(200);
    expect((await raw("POST", `ssh/sign/${ADMIN_ROLE}`, token, body)).status).toBe(403);
    // Granted by `ssh/sign/*` as received, so the ACL lets them through: 404, never a certificate.
    for (const spelling of [`ssh/sign/${ADMIN_ROLE}/`, `ssh/sign//${ADMIN_ROLE}`, `ssh/sign/${ADMIN_ROLE}//`]) {
      const res = await raw("POST", spelling, token, body);
      expect(res.status, spelling).toBe(404);
      expect(res.json).toEqual({ errors: ["unsupported path"] });
    }
    // Not granted as received: the ACL refuses them first.
    for (const spelling of [`ssh//sign/${ADMIN_ROLE}`, `/ssh/sign/${ADMIN_ROLE}`]) {
      expect((await raw("POST", spelling, token, body)).status, spelling).toBe(403);
    }
    // An encoded `/` decodes to the denied path, which the ACL refuses first.
    const encoded = await raw("POST", `ssh%2Fsign%2F${ADMIN_ROLE}`, token, body);
    expect(encoded.status).toBe(403);
    const encodedTail = await raw("POST", `ssh/sign/${ADMIN_ROLE}%2F`, token, body);
    expect(encodedTail.status).toBe(404);
  });

  it("does not replace the CA through `config/ca/` when `config/ca` is denied", async () => {
    const before = await vault("GET", "ssh/public_key");
    const token = await tokenWithPolicy({ "ssh/*": ["create", "read", "update", "delete"], "ssh/config/ca": ["deny"] });
    for (const [method, spelling] of [
      ["POST", "ssh/config/ca/"],
      ["DELETE", "ssh/config/ca/"],
      ["POST", "ssh/config//ca"],
      ["DELETE", "ssh/config%2Fca/"],
    ] as const) {
      const res = await raw(
        method,
        spelling,
        token,
        method === "POST" ? { generate_signing_key: true, key_type: "ed25519" } : undefined,
      );
      expect(res.status, `${method} ${spelling}`).toBe(404);
    }
    // An encoded `/` decodes to the denied path itself.
    expect((await raw("DELETE", "ssh/config%2Fca", token)).status).toBe(403);
    // Even root gets 404 for a spelling that is not the path's one.
    expect((await raw("DELETE", "ssh/config/ca/", "test-root-token")).status).toBe(404);
    expect((await vault("GET", "ssh/public_key")).text).toBe(before.text);
  });

  it("keeps a trailing slash on lists, where the ACL path carries it as in Vault", async () => {
    const listed = await vault("GET", "ssh/roles/?list=true");
    expect(listed.status).toBe(200);
    expect(listed.json.data.keys).toContain(ADMIN_ROLE);
    const token = await tokenWithPolicy({ "ssh/roles/": ["list"] });
    expect((await raw("GET", "ssh/roles?list=true", token)).status).toBe(200);
    expect((await raw("GET", "ssh/roles/?list=true", token)).status).toBe(200);
    // A read (not a list) with a trailing slash is another spelling.
    expect((await raw("GET", `ssh/roles/${ADMIN_ROLE}/`, "test-root-token")).status).toBe(404);
    expect((await raw("GET", "ssh/roles//?list=true", "test-root-token")).status).toBe(404);
  });

  it("answers 403 before 404 to a caller without a token, whatever the spelling", async () => {
    for (const spelling of ["ssh/verify/", "ssh/public_key/", "ssh//verify", "ssh/config/ca/"]) {
      const res = await raw("POST", spelling, null, { otp: "verify-echo-request" });
      expect(res.status, spelling).toBe(403);
    }
    expect((await raw("POST", "ssh/verify", null, { otp: "verify-echo-request" })).status).toBe(200);
  });
});

describe("S2b: policy names the handler would normalise are refused", () => {
  it("does not let `DEV` or ` dev` rewrite or delete a denied `dev`", async () => {
    const name = uniqueName("dev");
    const original = '{"path":{"a/*":{"capabilities":["read"]}}}';
    expect((await vault("PUT", `sys/policies/acl/${name}`, { body: { policy: original } })).status).toBe(204);
    const token = await tokenWithPolicy({
      "sys/policies/acl/*": ["create", "read", "update", "delete"],
      [`sys/policies/acl/${name}`]: ["deny"],
    });
    const replacement = { policy: '{"path":{"*":{"capabilities":["sudo","create","update","read","delete","list"]}}}' };
    expect((await raw("PUT", `sys/policies/acl/${name}`, token, replacement)).status).toBe(403);
    for (const spelling of [
      name.toUpperCase(),
      `%20${name}`,
      `${name}%20`,
      `%09${name}`,
      `${name[0]!.toUpperCase()}${name.slice(1)}`,
    ]) {
      for (const method of ["PUT", "DELETE", "GET"]) {
        const res = await raw(
          method,
          `sys/policies/acl/${spelling}`,
          token,
          method === "PUT" ? replacement : undefined,
        );
        expect(res.status, `${method} ${spelling}`).toBe(400);
        expect(res.json.errors[0]).toContain("is not in canonical form");
      }
    }
    // Root too: never a rewrite through another spelling.
    expect((await raw("PUT", `sys/policies/acl/${name.toUpperCase()}`, "test-root-token", replacement)).status).toBe(
      400,
    );
    const read = await vault("GET", `sys/policies/acl/${name}`);
    expect(read.json.data.policy).toBe(original);
  });
});
