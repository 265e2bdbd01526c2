/**
 * `POST ssh/verify` (Vault's path_verify.go, decisions S13, S16): the
 * cases of Vault's backend_test.go (verify once, TestSSHBackend_VerifyEcho). Races are in verify-race.test.ts.
 */
import { describe, expect, it } from "vitest";
import { uniqueName, vault } from "../../../helpers/vault";
import { issueOtp, writeOtpRole } from "./helpers";

const verify = (otp: unknown, mount = "ssh") => vault("POST", `${mount}/verify`, { token: null, body: { otp } });

describe("verify", () => {
  it("verifies once without a token, then answers `OTP not found`", async () => {
    const role = uniqueName("once");
    await writeOtpRole(role);
    const creds = await issueOtp(role, { ip: "10.1.2.3", username: "ubuntu" });

    const first = await verify(creds.data.key);
    expect(first.status).toBe(200);
    expect(first.json.data).toEqual({ username: "ubuntu", ip: "10.1.2.3", role_name: role });
    expect(first.json.lease_id).toBe("");

    const second = await verify(creds.data.key);
    expect(second.status).toBe(400);
    expect(second.json).toEqual({ errors: ["OTP not found"] });
  });

  it("garbage, an empty or a missing otp is `OTP not found`", async () => {
    for (const body of [{ otp: "garbage" }, { otp: "" }, {}, { otp: "00000000-0000-0000-0000-000000000000" }]) {
      const res = await vault("POST", "ssh/verify", { token: null, body });
      expect(res.status).toBe(400);
      expect(res.json).toEqual({ errors: ["OTP not found"] });
    }
  });

  it("a token may still be sent, and PUT is the same write (S2)", async () => {
    const role = uniqueName("token");
    await writeOtpRole(role);
    const creds = await issueOtp(role, { ip: "10.1.2.3" });
    const res = await vault("PUT", "ssh/verify", { body: { otp: creds.data.key } });
    expect(res.status).toBe(200);
    expect(res.json.data.role_name).toBe(role);
  });

  it("verify-echo-request answers verify-echo-response", async () => {
    const res = await verify("verify-echo-request");
    expect(res.status).toBe(200);
    expect(res.json.data).toEqual({ message: "verify-echo-response" });
  });

  it("S16: only writes to verify skip the token", async () => {
    for (const method of ["GET", "DELETE", "PATCH"]) {
      const anonymous = await vault(method, "ssh/verify", { token: null });
      expect(anonymous.status, method).toBe(403);
      expect(anonymous.json).toEqual({ errors: ["permission denied"] });
      expect((await vault(method, "ssh/verify")).status, method).toBe(405);
    }
    expect((await vault("GET", "ssh/verify?list=true", { token: null })).status).toBe(403);
  });

  it("an OTP is valid only on the mount that issued it (S1)", async () => {
    const role = uniqueName("mounts");
    await writeOtpRole(role, {}, "ssh-two");
    const creds = await issueOtp(role, { ip: "10.0.0.9" }, "ssh-two");
    expect((await verify(creds.data.key, "ssh")).json).toEqual({ errors: ["OTP not found"] });
    expect((await verify(creds.data.key, "ssh-two")).status).toBe(200);
  });

  it("an OTP in another case or with whitespace is not the OTP", async () => {
    const role = uniqueName("exact");
    await writeOtpRole(role);
    const { key } = (await issueOtp(role, { ip: "10.0.0.9" })).data;
    expect((await verify(key.toUpperCase())).status).toBe(400);
    expect((await verify(` ${key}`)).status).toBe(400);
    expect((await verify(key)).status).toBe(200);
  });
});
