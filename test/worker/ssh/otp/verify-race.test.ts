/**
 * Verify-once under concurrency (decision S13): the OtpStore shard consumes an OTP in one
 * statement, so racing verifiers have exactly one winner. In a file of its own, so its
 * thousands of requests run in a fresh workerd, and through `direct` (helpers.ts).
 */
import { describe, expect, it } from "vitest";
import { uniqueName } from "../../../helpers/vault";
import { direct, writeOtpRole } from "./helpers";

const verifyDirect = (otp: string) => direct("POST", "ssh/verify", { token: null, body: { otp } });
const credsDirect = async (role: string, ip: string) => {
  const res = await direct("POST", `ssh/creds/${role}`, { body: { ip } });
  expect(res.status, res.text).toBe(200);
  return res.json.data.key as string;
};

describe("verify races", () => {
  it("S13: of 100 simultaneous verifies of one OTP exactly one succeeds", async () => {
    const role = uniqueName("race");
    await writeOtpRole(role);
    const key = await credsDirect(role, "10.0.0.7");
    const answers = await Promise.all(Array.from({ length: 100 }, () => verifyDirect(key)));
    const ok = answers.filter((a) => a.status === 200);
    expect(ok).toHaveLength(1);
    expect(ok[0]!.json.data).toEqual({ username: "ubuntu", ip: "10.0.0.7", role_name: role });
    for (const a of answers.filter((x) => x.status !== 200)) expect(a.json).toEqual({ errors: ["OTP not found"] });
  });

  it("S13: across 1,000 OTPs verified concurrently (twice each) none succeeds twice", {
    timeout: 600_000,
  }, async () => {
    const role = uniqueName("many");
    await writeOtpRole(role);
    const keys: string[] = [];
    for (let batch = 0; batch < 10; batch++) {
      keys.push(...(await Promise.all(Array.from({ length: 100 }, () => credsDirect(role, "10.0.0.8")))));
    }
    expect(new Set(keys).size).toBe(1000);

    // All 2,000 attempts at once, each OTP's two attempts racing each other.
    const attempts = [...keys, ...keys].sort(() => Math.random() - 0.5);
    const answers = await Promise.all(attempts.map(async (key) => ({ key, res: await verifyDirect(key) })));
    const successes = new Map<string, number>();
    for (const { key, res } of answers) {
      if (res.status === 200) successes.set(key, (successes.get(key) ?? 0) + 1);
      else expect(res.json).toEqual({ errors: ["OTP not found"] });
    }
    expect(successes.size).toBe(1000);
    expect([...successes.values()].every((n) => n === 1)).toBe(true);
  });
});
