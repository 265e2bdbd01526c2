/**
 * Decision B8: the test-time D1 guard enforces D1's limits on the real binding, for tests
 * that use `env` directly, for requests through the Worker's fetch entry and its queue
 * consumer, and can make chosen statements fail.
 */
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { injectD1Failure } from "../../../src/db/d1-guard";
import { bootstrapOrg } from "../../helpers/nocode";

const placeholders = (n: number) => Array.from({ length: n }, () => "?").join(",");

describe("the D1 guard (B8)", () => {
  it("lets 100 bound parameters through and refuses 101", async () => {
    const ok = await env.DB.prepare(`SELECT 1 WHERE 1 IN (${placeholders(100)})`)
      .bind(...Array.from({ length: 100 }, (_, i) => i))
      .all();
    expect(ok.results).toHaveLength(1);
    expect(() =>
      env.DB.prepare(`SELECT 1 WHERE 1 IN (${placeholders(101)})`).bind(...Array.from({ length: 101 }, (_, i) => i)),
    ).toThrow(/too many SQL variables/);
  });

  it("refuses more than 100,000 bytes of SQL and more than 2 MB of bound values", () => {
    expect(() => env.DB.prepare(`SELECT 1 /* ${"x".repeat(100_000)} */`)).toThrow(/statement too long/);
    expect(() => env.DB.prepare("SELECT ?").bind("x".repeat(2_000_001))).toThrow(/too big/);
  });

  it("makes a chosen statement fail once, in a batch as a whole", async () => {
    injectD1Failure("SELECT 42");
    await expect(env.DB.prepare("SELECT 42").all()).rejects.toThrow(/injected failure/);
    expect((await env.DB.prepare("SELECT 42 AS v").all()).results).toEqual([{ v: 42 }]);
    injectD1Failure("SELECT 43");
    await expect(env.DB.batch([env.DB.prepare("SELECT 41"), env.DB.prepare("SELECT 43")])).rejects.toThrow(
      /injected failure/,
    );
  });

  it("covers requests through the Worker's own entry point (exports.default.fetch)", async () => {
    const { org, ownerToken } = await bootstrapOrg();
    const get = () =>
      exports.default.fetch(`http://keyway.test/api/v2/organizations/${org}`, {
        headers: { Authorization: `Bearer ${ownerToken}` },
      });
    expect((await get()).status).toBe(200);
    const remove = injectD1Failure(/from "organizations"/i, 1_000);
    const res = await get();
    remove();
    expect(res.status).toBe(500);
  });
});
