/**
 * B18: nothing unauthenticated grows memory or flushes caches. 20,000 requests without a
 * valid credential — each with its own cookie, token and CSRF value — to /v1, /api/v2 and
 * /app (the console's sign-in, its pages and forms, the plan page's view token) leave
 * every per-isolate cache (isolateCacheStats: every IsolateCache of src/, which the static
 * scan of test/unit/lib/module-state.test.ts makes the only kind of per-isolate
 * collection) within its bounds, with no entry added, and flush nothing.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { handleFetch } from "../../../src/index";
import { isolateCacheStats, MAX_CACHE_BYTES, MAX_CACHE_ENTRIES } from "../../../src/lib/isolate-cache";
import { cachedNocode } from "../../../src/nocode/cache";

const TOTAL = 20_000;
const CONCURRENCY = 64;

const random = () => crypto.randomUUID().replaceAll("-", "");
const cookie43 = () => `${random()}${random()}`.slice(0, 43);

/** The i-th request: a different kind of door, and values nobody issued. */
function request(i: number): Request {
  const base = "http://keyway.test";
  const token = random();
  const csrf = random();
  const form = (fields: Record<string, string>) => ({
    method: "POST",
    headers: {
      "Content-Type": "application/x-www-form-urlencoded",
      Cookie: `keyway_console=${cookie43()}; keyway_console_sign_in=${cookie43()}; __Host-keyway_console=${cookie43()}`,
    },
    body: new URLSearchParams(fields).toString(),
  });
  switch (i % 10) {
    case 0:
      return new Request(`${base}/v1/ssh/sign/role-${i % 7}`, {
        method: "POST",
        headers: { "X-Vault-Token": `hvs.${token}`, "Content-Type": "application/json" },
        body: JSON.stringify({ public_key: "ssh-ed25519 AAAA" }),
      });
    case 1:
      return new Request(`${base}/v1/sys/mounts`, { headers: { Authorization: `Bearer ${token}` } });
    case 2:
      return new Request(`${base}/api/v2/organizations`, {
        headers: { Authorization: `Bearer ${token}.atlasv1.${csrf}` },
      });
    case 3:
      return new Request(`${base}/api/v2/organizations/acme/teams`, {
        method: "POST",
        headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/vnd.api+json", Cookie: `s=${csrf}` },
        body: JSON.stringify({ data: { type: "teams", attributes: { name: token } } }),
      });
    case 4:
      return new Request(`${base}/app/~/sign-in`, form({ token: `${token}.atlasv1.${csrf}`, csrf }));
    case 5:
      return new Request(`${base}/app/~/sign-in`, form({ token: `${token}\n${csrf}`, csrf: cookie43() }));
    case 6:
      return new Request(`${base}/app/acme/workspaces/ws/upgrade`, form({ csrf }));
    case 7:
      return new Request(`${base}/app/~/sign-out`, form({ csrf }));
    case 8:
      return new Request(`${base}/app/acme`, { headers: { Cookie: `keyway_console=${cookie43()}` } });
    default:
      return new Request(`${base}/app/acme/workspaces/ws/runs/run-${token.slice(0, 16)}?view=1999999999.${cookie43()}`);
  }
}

async function send(i: number): Promise<number> {
  const ctx = createExecutionContext();
  const res = await handleFetch(request(i), env, ctx);
  await res.arrayBuffer();
  await waitOnExecutionContext(ctx);
  return res.status;
}

describe("B18: 20,000 unauthenticated requests", () => {
  it("grow no cache and flush none", { timeout: 240_000 }, async () => {
    // Warm every door once, so entries keyed by server configuration (parsed mounts, imported keys) exist.
    for (let i = 0; i < 10; i++) await send(i);
    const sentinel = `module:b18-sentinel-${crypto.randomUUID()}` as const;
    const far = Date.now() + 10 * 365 * 86_400_000;
    await cachedNocode(sentinel, async () => "kept", { now: far });
    const before = new Map(isolateCacheStats().map((s) => [s.name, s]));

    // 20,000 access lines would cost more than the requests themselves: keep them off the console.
    const quiet = [
      vi.spyOn(console, "log").mockImplementation(() => {}),
      vi.spyOn(console, "error").mockImplementation(() => {}),
    ];
    const statuses = new Map<number, number>();
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < TOTAL) {
          const status = await send(next++);
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
        }
      }),
    );

    for (const spy of quiet) spy.mockRestore();
    // Nobody got in, and nothing failed.
    for (const status of statuses.keys()) expect([303, 400, 401, 403, 404, 405]).toContain(status);
    const after = isolateCacheStats();
    expect(after.length).toBeGreaterThanOrEqual(10);
    for (const stats of after) {
      expect(stats.maxEntries, stats.name).toBeLessThanOrEqual(MAX_CACHE_ENTRIES);
      expect(stats.size, stats.name).toBeLessThanOrEqual(stats.maxEntries);
      if (stats.maxBytes !== null) {
        expect(stats.maxBytes, stats.name).toBeLessThanOrEqual(MAX_CACHE_BYTES);
        expect(stats.bytes, stats.name).toBeLessThanOrEqual(stats.maxBytes);
      }
      // No entry keyed by anything the requests chose.
      expect(stats.size, `${stats.name} grew`).toBeLessThanOrEqual(before.get(stats.name)?.size ?? 0);
    }
    // And none was flushed: the no-code cache still holds its sentinel.
    expect(await cachedNocode(sentinel, async () => "reloaded", { now: far })).toBe("kept");
  });
});
