/**
 * B12, S16a: `sys/health` (GET, HEAD), `sys/seal-status` and `sys/leader` answer without a
 * token in Vault's shapes, 200 while D1 answers and 503 `storage unavailable` when it does
 * not. The failing D1 is real: the test runtime's `DB_UNMIGRATED`, a local D1 database that
 * never received Keyway's schema, put in the place of `DB`.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import packageJson from "../../../../package.json";
import { handleFetch } from "../../../../src/index";
import { vault } from "../../../helpers/vault";

/** Call /v1 with `DB` replaced by the unmigrated database. */
async function withBrokenStorage(method: string, path: string) {
  const ctx = createExecutionContext();
  const res = await handleFetch(
    new Request(`http://keyway.test/v1/${path}`, { method }),
    { ...env, DB: env.DB_UNMIGRATED },
    ctx,
  );
  const text = await res.text();
  await waitOnExecutionContext(ctx);
  return { status: res.status, text, headers: res.headers };
}

describe("sys/health, sys/seal-status, sys/leader (B12)", () => {
  it("sys/health answers Vault's shape without a token", async () => {
    const before = Math.floor(Date.now() / 1000);
    const res = await vault("GET", "sys/health", { token: null });
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toBe("application/json");
    expect(res.headers.get("X-Request-Id")).toBeTruthy();
    expect(res.json).toEqual({
      initialized: true,
      sealed: false,
      standby: false,
      performance_standby: false,
      replication_performance_mode: "disabled",
      replication_dr_mode: "disabled",
      server_time_utc: expect.any(Number),
      version: packageJson.version,
      enterprise: false,
      cluster_name: "keyway",
      krl_stale: [],
      krl_orphaned_revocations: {},
    });
    expect(res.json.server_time_utc).toBeGreaterThanOrEqual(before);
  });

  it("sys/health honours Vault's activecode for load balancers", async () => {
    expect((await vault("GET", "sys/health?activecode=299", { token: null })).status).toBe(299);
    // B19: Keyway is always active, so the other codes are checked but never decide.
    const all = await vault(
      "GET",
      "sys/health?uninitcode=501&sealedcode=503&standbycode=429&drsecondarycode=472&performancestandbycode=473&standbyok=true&perfstandbyok=0&activecode=201",
      { token: null },
    );
    expect(all.status).toBe(201);
    expect(all.json.initialized).toBe(true);
    expect((await vault("GET", "sys/health?standbycode=599&activecode=%2B0200", { token: null })).status).toBe(200);
  });

  it("B19: 204, 205 and 304 answer with an empty body, GET and HEAD", async () => {
    for (const code of [204, 205, 304]) {
      for (const method of ["GET", "HEAD"]) {
        const res = await vault(method, `sys/health?activecode=${code}`, { token: null });
        expect(res.status, `${method} ${code}`).toBe(code);
        expect(res.text, `${method} ${code}`).toBe("");
      }
    }
  });

  it("B19: a code that is not an integer from 200 to 599, or a bad boolean, is a 400 naming it", async () => {
    const params = [
      "uninitcode",
      "sealedcode",
      "standbycode",
      "activecode",
      "drsecondarycode",
      "performancestandbycode",
    ];
    const bad = [
      "",
      "199",
      "600",
      "0",
      "-200",
      "200.0",
      "2e2",
      "0x12c",
      " 200",
      "200 ",
      "abc",
      "99999999999999999999",
      "%00",
    ];
    for (const param of params) {
      for (const value of bad) {
        for (const method of ["GET", "HEAD"]) {
          const res = await vault(method, `sys/health?${param}=${encodeURIComponent(value)}`, { token: null });
          expect(res.status, `${method} ${param}=${value}`).toBe(400);
          if (method === "GET")
            expect(res.json, `${param}=${value}`).toEqual({
              errors: [`${param} must be a status code between 200 and 599`],
            });
        }
      }
    }
    for (const param of ["standbyok", "perfstandbyok"]) {
      for (const value of ["", "yes", "2", "TRUE ", "tRuE"]) {
        const res = await vault("GET", `sys/health?${param}=${encodeURIComponent(value)}`, { token: null });
        expect(res.status, `${param}=${value}`).toBe(400);
        expect(res.json).toEqual({ errors: [`${param} must be true or false`] });
      }
    }
  });

  it("HEAD sys/health answers the status with no body", async () => {
    const res = await vault("HEAD", "sys/health", { token: null });
    expect(res.status).toBe(200);
    expect(res.text).toBe("");
  });

  it("sys/seal-status answers Vault's shape without a token", async () => {
    const res = await vault("GET", "sys/seal-status", { token: null });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      type: "shamir",
      initialized: true,
      sealed: false,
      t: 1,
      n: 1,
      progress: 0,
      nonce: "",
      version: packageJson.version,
      build_date: "",
      migration: false,
      cluster_name: "keyway",
      recovery_seal: false,
      storage_type: "d1",
    });
  });

  it("sys/leader answers Vault's shape without a token", async () => {
    const res = await vault("GET", "sys/leader", { token: null });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      ha_enabled: false,
      is_self: false,
      active_time: "0001-01-01T00:00:00Z",
      leader_address: "",
      leader_cluster_address: "",
      performance_standby: false,
      performance_standby_last_remote_wal: 0,
    });
  });

  it("answers 503 storage unavailable on every probe when D1 fails, HEAD included", async () => {
    for (const path of ["sys/health", "sys/seal-status", "sys/leader"]) {
      const res = await withBrokenStorage("GET", path);
      expect(res.status, path).toBe(503);
      expect(JSON.parse(res.text), path).toEqual({ errors: ["storage unavailable"] });
    }
    const head = await withBrokenStorage("HEAD", "sys/health");
    expect(head.status).toBe(503);
    expect(head.text).toBe("");
  });

  it("other methods on these paths need a token (S16a)", async () => {
    for (const [method, path] of [
      ["POST", "sys/health"],
      ["DELETE", "sys/health"],
      ["HEAD", "sys/seal-status"],
      ["POST", "sys/seal-status"],
      ["POST", "sys/leader"],
    ] as const) {
      const res = await vault(method, path, { token: null });
      expect(res.status, `${method} ${path}`).toBe(403);
    }
    // With a token, an unsupported method is Vault's 405.
    expect((await vault("POST", "sys/health")).status).toBe(405);
  });
});
