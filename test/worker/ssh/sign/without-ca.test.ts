/**
 * Sign errors before and without a CA (Vault's backend_test.go; decision S4: no CA at
 * sign time is a 400 with Vault's text). Neither mount has a CA in this file.
 */
import { describe, expect, it } from "vitest";
import { uniqueName, vault } from "../../../helpers/vault";
import { SUBJECT_KEYS } from "../ca-fixtures";

async function role(body: Record<string, unknown>, mount = "ssh"): Promise<string> {
  const name = uniqueName("err");
  const res = await vault("POST", `${mount}/roles/${name}`, { body });
  if (res.status !== 204) throw new Error(`role write failed: ${res.status} ${res.text}`);
  return name;
}

describe("sign errors", () => {
  it("unknown role → 400 `Unknown role: nope` (capital U)", async () => {
    const res = await vault("POST", "ssh/sign/nope", { body: { public_key: SUBJECT_KEYS.ed25519 } });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ errors: ["Unknown role: nope"] });
  });

  it("missing public_key → 400 `missing public_key`", async () => {
    const name = await role({ key_type: "ca", allow_user_certificates: true, allowed_users: "*" });
    for (const body of [{}, { public_key: "" }, { valid_principals: "a" }]) {
      const res = await vault("POST", `ssh/sign/${name}`, { body });
      expect(res.status).toBe(400);
      expect(res.json).toEqual({ errors: ["missing public_key"] });
    }
  });

  it("garbage key → 400 starting `failed to parse public_key as SSH key:`", async () => {
    const name = await role({ key_type: "ca", allow_user_certificates: true, allowed_users: "*" });
    const res = await vault("POST", `ssh/sign/${name}`, {
      body: { public_key: "ssh-rsa AAAAgarbage", valid_principals: "a" },
    });
    expect(res.status).toBe(400);
    expect(res.json.errors[0]).toMatch(/^failed to parse public_key as SSH key: /);
  });

  it("a valid request without a CA → 400 `failed to read CA private key` (S4), after every other check", async () => {
    const name = await role({ key_type: "ca", allow_user_certificates: true, allowed_users: "alice" });
    const res = await vault("POST", `ssh/sign/${name}`, {
      body: { public_key: SUBJECT_KEYS.ed25519, valid_principals: "alice" },
    });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ errors: ["failed to read CA private key"] });
    // Role checks come first.
    const refused = await vault("POST", `ssh/sign/${name}`, {
      body: { public_key: SUBJECT_KEYS.ed25519, valid_principals: "bob" },
    });
    expect(refused.json).toEqual({ errors: ["bob is not a valid value for valid_principals"] });
  });

  it("a CA on one mount does not serve another (S1)", async () => {
    const gen = await vault("POST", "ssh-two/config/ca", { body: { key_type: "ed25519" } });
    expect(gen.status).toBe(200);
    const name = await role({ key_type: "ca", allow_user_certificates: true, allowed_users: "*" });
    const res = await vault("POST", `ssh/sign/${name}`, {
      body: { public_key: SUBJECT_KEYS.ed25519, valid_principals: "a" },
    });
    expect(res.json).toEqual({ errors: ["failed to read CA private key"] });
    await vault("DELETE", "ssh-two/config/ca");
  });

  it("field validation comes before the role lookup", async () => {
    const res = await vault("POST", "ssh/sign/nope", { body: { public_key: SUBJECT_KEYS.ed25519, ttl: "x" } });
    expect(res.status).toBe(400);
    expect(res.json.errors[0]).toMatch(/^Field validation failed: /);
  });
});
