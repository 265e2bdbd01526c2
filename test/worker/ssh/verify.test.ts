/**
 * `POST ssh/verify` (seed row 10, reference §3.8, decisions S13, S16): conformance
 * checklist items 11 and 12, and verify-once under concurrency.
 */
import { describe, expect, it } from "vitest";
import { uniqueName, vault } from "../../helpers/vault";
import { issueOtp, writeOtpRole } from "./otp-helpers";

const verify = (otp: unknown, mount = "ssh") => vault("POST", `${mount}/verify`, { token: null, body: { otp } });

describe("verify", () => {
  it("item 11: verifies once without a token, then answers `OTP not found`", async () => {
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

  it("item 11: garbage, an empty or a missing otp is `OTP not found`", async () => {
    for (const body of [{ otp: "garbage" }, { otp: "" }, {}, { otp: "00000000-0000-0000-0000-000000000000" }]) {
      const res = await vault("POST", "ssh/verify", { token: null, body });
      expect(res.status).toBe(400);
      expect(res.json).toEqual({ errors: ["OTP not found"] });
    }
  });

  it("item 11: a token may still be sent, and PUT is the same write (S2)", async () => {
    const role = uniqueName("token");
    await writeOtpRole(role);
    const creds = await issueOtp(role, { ip: "10.1.2.3" });
    const res = await vault("PUT", "ssh/verify", { body: { otp: creds.data.key } });
    expect(res.status).toBe(200);
    expect(res.json.data.role_name).toBe(role);
  });

  it("item 12: verify-echo-request answers verify-echo-response", async () => {
    const res = await verify("verify-echo-request");
    expect(res.status).toBe(200);
    expect(res.json.data).toEqual({ message: "verify-echo-response" });
  });

  it("item 49 / S16: only writes to verify skip the token", async () => {
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

  it("S13: of 100 simultaneous verifies of one OTP exactly one succeeds", async () => {
    const role = uniqueName("race");
    await writeOtpRole(role);
    const { key } = (await issueOtp(role, { ip: "10.0.0.7" })).data;
    const answers = await Promise.all(Array.from({ length: 100 }, () => verify(key)));
    const ok = answers.filter((a) => a.status === 200);
    expect(ok).toHaveLength(1);
    expect(ok[0]!.json.data).toEqual({ username: "ubuntu", ip: "10.0.0.7", role_name: role });
    for (const a of answers.filter((x) => x.status !== 200)) expect(a.json).toEqual({ errors: ["OTP not found"] });
  });

  it("S13: across 1,000 OTPs verified concurrently (twice each) none succeeds twice", async () => {
    const role = uniqueName("many");
    await writeOtpRole(role);
    const keys: string[] = [];
    for (let batch = 0; batch < 10; batch++) {
      const answers = await Promise.all(Array.from({ length: 100 }, () => issueOtp(role, { ip: "10.0.0.8" })));
      keys.push(...answers.map((a) => a.data.key as string));
    }
    expect(new Set(keys).size).toBe(1000);

    // Each OTP is verified twice, the two attempts racing inside the same batch.
    const successes = new Map<string, number>();
    for (let i = 0; i < keys.length; i += 100) {
      const slice = keys.slice(i, i + 100);
      const attempts = [...slice, ...slice].sort(() => Math.random() - 0.5);
      const answers = await Promise.all(attempts.map(async (key) => ({ key, res: await verify(key) })));
      for (const { key, res } of answers) {
        if (res.status === 200) successes.set(key, (successes.get(key) ?? 0) + 1);
        else expect(res.json).toEqual({ errors: ["OTP not found"] });
      }
    }
    expect(successes.size).toBe(1000);
    expect([...successes.values()].every((n) => n === 1)).toBe(true);
  }, 600_000); // 3,000 requests; generous for a loaded CI machine
});
