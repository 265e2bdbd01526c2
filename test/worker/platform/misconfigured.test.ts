/**
 * B10: a misconfigured deployment answers every request 503 naming
 * the setting, in each API's error format (/v1 Vault's, /api JSON:API's, anything else
 * text/plain), never echoing a secret. Driven through the Worker's real fetch handler with
 * the test runtime's bindings and one secret changed per case.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { handleFetch } from "../../../src/index";

const ZERO_KEY = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";
const OTHER_KEY = btoa("another-32-byte-key-for-tests-ok");
const SHORT_KEY = btoa("only-16-bytes-ab");

const CASES: { name: string; change: Partial<Env>; setting: string; secret?: string }[] = [
  {
    name: "placeholder ROOT_TOKEN",
    change: { ROOT_TOKEN: "change-me-root-token" },
    setting: "ROOT_TOKEN",
    secret: "change-me-root-token",
  },
  {
    name: "placeholder ADMIN_TOKEN",
    change: { ADMIN_TOKEN: "change-me-admin-token" },
    setting: "ADMIN_TOKEN",
    secret: "change-me-admin-token",
  },
  {
    name: "ROOT_TOKEN equal to ADMIN_TOKEN",
    change: { ROOT_TOKEN: env.ADMIN_TOKEN },
    setting: "ROOT_TOKEN",
    secret: env.ADMIN_TOKEN,
  },
  {
    name: "all-zero KEYWAY_HASH_KEY",
    change: { KEYWAY_HASH_KEY: ZERO_KEY },
    setting: "KEYWAY_HASH_KEY",
    secret: ZERO_KEY,
  },
  {
    name: "KEYWAY_HASH_KEY of 16 bytes",
    change: { KEYWAY_HASH_KEY: SHORT_KEY },
    setting: "KEYWAY_HASH_KEY",
    secret: SHORT_KEY,
  },
  {
    name: "all-zero KEYWAY_KEK (the example's)",
    change: { KEYWAY_KEK: `k1:${ZERO_KEY}` },
    setting: "KEYWAY_KEK",
    secret: ZERO_KEY,
  },
  {
    name: "KEYWAY_KEK key of 16 bytes",
    change: { KEYWAY_KEK: `k1:${OTHER_KEY},k2:${SHORT_KEY}` },
    setting: "KEYWAY_KEK",
    secret: SHORT_KEY,
  },
  {
    name: "duplicate KEYWAY_KEK key id (k1:NEW,k1:OLD)",
    change: { KEYWAY_KEK: `t1:${OTHER_KEY},${env.KEYWAY_KEK}` },
    setting: 'KEYWAY_KEK: duplicate key id "t1"',
    secret: OTHER_KEY,
  },
];

async function fetchWith(change: Partial<Env>, method: string, path: string, headers: Record<string, string> = {}) {
  const ctx = createExecutionContext();
  const res = await handleFetch(
    new Request(`http://keyway.test${path}`, { method, headers }),
    { ...env, ...change },
    ctx,
  );
  const text = await res.text();
  await waitOnExecutionContext(ctx);
  return { status: res.status, text, type: res.headers.get("content-type") ?? "" };
}

describe("B10: a misconfigured deployment answers 503 everywhere", () => {
  for (const c of CASES) {
    it(c.name, async () => {
      const expected = `server misconfigured: ${c.setting}`;
      const root = { "X-Vault-Token": env.ROOT_TOKEN };
      for (const [method, path, headers] of [
        ["GET", "/v1/ssh/public_key", {}],
        ["POST", "/v1/ssh/verify", {}],
        ["GET", "/v1/auth/token/lookup-self", root],
        ["GET", "/v1/nowhere", {}],
      ] as const) {
        const answer = await fetchWith(c.change, method, path, headers);
        expect(answer.status, `${method} ${path}`).toBe(503);
        expect(answer.type).toMatch(/^application\/json/);
        const body = JSON.parse(answer.text);
        expect(body.errors).toHaveLength(1);
        expect(body.errors[0]).toMatch(new RegExp(`^${expected.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
      }
      for (const [method, path] of [
        ["GET", "/api/v2/ping"],
        ["GET", "/api/v2/organizations"],
        ["POST", "/api/v2/organizations"],
      ] as const) {
        const answer = await fetchWith(c.change, method, path, { Authorization: `Bearer ${env.ADMIN_TOKEN}` });
        expect(answer.status, `${method} ${path}`).toBe(503);
        expect(answer.type).toBe("application/vnd.api+json");
        const body = JSON.parse(answer.text);
        expect(body.errors[0]).toMatchObject({ status: "503", title: "service unavailable" });
        expect(body.errors[0].detail.startsWith(expected)).toBe(true);
      }
      for (const path of ["/", "/app/plans/x", "/favicon.ico"]) {
        const answer = await fetchWith(c.change, "GET", path);
        expect(answer.status, path).toBe(503);
        expect(answer.type).toMatch(/^text\/plain/);
        expect(answer.text.startsWith(expected)).toBe(true);
      }
      // Never the secret itself, in any answer.
      const all = await Promise.all([
        fetchWith(c.change, "GET", "/v1/sys/policies/acl"),
        fetchWith(c.change, "GET", "/api/v2/ping"),
        fetchWith(c.change, "GET", "/"),
      ]);
      if (c.secret) for (const answer of all) expect(answer.text).not.toContain(c.secret);
    });
  }

  it("the test runtime's own configuration is accepted (requests are served)", async () => {
    expect((await fetchWith({}, "GET", "/v1/ssh/public_key")).status).not.toBe(503);
    expect((await fetchWith({}, "GET", "/api/v2/ping", { Authorization: `Bearer ${env.ADMIN_TOKEN}` })).status).toBe(
      204,
    );
  });

  it("a configuration fixed after a bad one is served again (checked per distinct configuration)", async () => {
    expect((await fetchWith({ ROOT_TOKEN: "change-me-root-token" }, "GET", "/v1/ssh/public_key")).status).toBe(503);
    expect((await fetchWith({}, "GET", "/v1/ssh/public_key")).status).not.toBe(503);
  });
});
