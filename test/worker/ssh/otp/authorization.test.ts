/**
 * Vault's TestProperAuthing for the OTP paths, with decisions
 * S2a and S16: without a token every method on config/zeroaddress, creds, lookup and
 * tidy/dynamic-keys is 403 `permission denied`; only writes to verify are served.
 */
import { describe, expect, it } from "vitest";
import { tokenWithPolicy, uniqueName, vault } from "../../../helpers/vault";
import { issueOtp, writeOtpRole } from "./helpers";

const PATHS = ["ssh/config/zeroaddress", "ssh/creds/test-otp", "ssh/lookup", "ssh/tidy/dynamic-keys"];

describe("authentication of the OTP paths", () => {
  for (const path of PATHS) {
    it(`${path}: every method without a token is 403`, async () => {
      for (const method of ["GET", "POST", "PUT", "DELETE", "PATCH"]) {
        const res = await vault(method, path, {
          token: null,
          body: method === "GET" || method === "DELETE" ? undefined : {},
        });
        expect(res.status, `${method} ${path}`).toBe(403);
        expect(res.json).toEqual({ errors: ["permission denied"] });
      }
      expect((await vault("GET", `${path}?list=true`, { token: null })).status).toBe(403);
      expect((await vault("GET", path, { token: "not-a-token" })).status).toBe(403);
    });
  }

  it("verify: POST without a token is served (S16)", async () => {
    const res = await vault("POST", "ssh/verify", { token: null, body: { otp: "verify-echo-request" } });
    expect(res.status).toBe(200);
  });

  it("the ACL applies (S6): creds needs update, lookup needs update, zeroaddress read needs read", async () => {
    const role = uniqueName("acl");
    await writeOtpRole(role);
    const token = await tokenWithPolicy({ [`ssh/creds/${role}`]: ["update"], "ssh/config/zeroaddress": ["read"] });
    expect((await vault("POST", `ssh/creds/${role}`, { token, body: { ip: "10.0.0.1" } })).status).toBe(200);
    expect((await vault("POST", "ssh/lookup", { token, body: { ip: "10.0.0.1" } })).status).toBe(403);
    expect((await vault("POST", "ssh/config/zeroaddress", { token, body: { roles: role } })).status).toBe(403);
    expect((await vault("DELETE", "ssh/tidy/dynamic-keys", { token })).status).toBe(403);
    const readOnly = await tokenWithPolicy({ [`ssh/creds/${role}`]: ["read"] });
    expect((await vault("POST", `ssh/creds/${role}`, { token: readOnly, body: { ip: "10.0.0.1" } })).status).toBe(403);
  });

  it("the OTP a limited token gets verifies like any other", async () => {
    const role = uniqueName("acl-otp");
    await writeOtpRole(role);
    const creds = await issueOtp(role, { ip: "10.0.0.2" });
    const res = await vault("POST", "ssh/verify", { token: null, body: { otp: creds.data.key } });
    expect(res.json.data.role_name).toBe(role);
  });
});
