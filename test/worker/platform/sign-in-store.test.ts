/**
 * The sign-in state store and rate limiter (decisions B21, S26, S28), against the real
 * Durable Object binding: single-use states, store-without-consume, the 10,000-state cap,
 * expiry by alarm and lazily, and 60 requests a minute per address.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { clientAddressKey, newSignInState, type SignInScope, signInStore } from "../../../src/platform/sign-in";
import { MAX_OUTSTANDING_STATES, RATE_LIMIT } from "../../../src/platform/sign-in-store";

const freshScope = (wing: "ssh" | "nocode" = "ssh"): SignInScope => `${wing}:${crypto.randomUUID()}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("sign-in states (B21, S26)", () => {
  it("a state is consumed exactly once, with its record", async () => {
    const store = signInStore(env, freshScope());
    const state = newSignInState();
    const record = { nonce: "n1", verifier: "v1", role: "dev" };
    expect(await store.put(state, record, 600_000)).toEqual({ ok: true, value: null });
    expect(await store.put(state, record, 600_000)).toEqual({ ok: false, error: "collision" });
    expect(await store.consume(state)).toEqual({ ok: true, value: { record, code: null } });
    expect(await store.consume(state)).toEqual({ ok: false, error: "not_found" });
  });

  it("of concurrent consumers exactly one gets the state", async () => {
    const store = signInStore(env, freshScope());
    const state = newSignInState();
    await store.put(state, { n: "1" }, 600_000);
    const results = await Promise.all(Array.from({ length: 20 }, () => store.consume(state)));
    expect(results.filter((r) => r.ok)).toHaveLength(1);
  });

  it("form_post: attachCode stores a code without consuming; consume returns it once", async () => {
    const store = signInStore(env, freshScope());
    const state = newSignInState();
    expect(await store.attachCode(state, "code-1")).toEqual({ ok: false, error: "not_found" });
    await store.put(state, { r: "yes" }, 600_000);
    expect(await store.attachCode(state, "code-1")).toEqual({ ok: true, value: null });
    expect(await store.attachCode(state, "")).toEqual({ ok: false, error: "invalid" });
    expect(await store.consume(state)).toEqual({ ok: true, value: { record: { r: "yes" }, code: "code-1" } });
    expect(await store.attachCode(state, "code-2")).toEqual({ ok: false, error: "not_found" });
  });

  it("states are per scope: another mount or an organization never sees them", async () => {
    const state = newSignInState();
    const ssh = signInStore(env, freshScope("ssh"));
    await ssh.put(state, { a: "1" }, 600_000);
    expect(await signInStore(env, freshScope("nocode")).consume(state)).toEqual({ ok: false, error: "not_found" });
    expect((await ssh.consume(state)).ok).toBe(true);
  });

  it("refuses a TTL over 10 minutes, empty states and oversized records", async () => {
    const store = signInStore(env, freshScope());
    expect(await store.put(newSignInState(), {}, 600_001)).toEqual({ ok: false, error: "invalid" });
    expect(await store.put(newSignInState(), {}, 0)).toEqual({ ok: false, error: "invalid" });
    expect(await store.put("", {}, 1000)).toEqual({ ok: false, error: "invalid" });
    expect(await store.put(newSignInState(), { big: "x".repeat(20_000) }, 1000)).toEqual({
      ok: false,
      error: "invalid",
    });
  });

  it("an expired state is never returned (lazily), and the alarm deletes it", async () => {
    const store = signInStore(env, freshScope());
    const lazy = newSignInState();
    const byAlarm = newSignInState();
    await store.put(lazy, { x: "1" }, 50);
    await store.put(byAlarm, { x: "2" }, 50);
    const alarmAt = await runInDurableObject(store, (_i, state) => state.storage.getAlarm());
    expect(alarmAt).not.toBeNull();
    expect(alarmAt!).toBeLessThanOrEqual(Date.now() + 50);
    await sleep(80);
    expect(await store.consume(lazy)).toEqual({ ok: false, error: "not_found" });
    await runDurableObjectAlarm(store);
    const left = await runInDurableObject(store, (_i, state) =>
      state.storage.sql.exec("SELECT state FROM states").toArray(),
    );
    expect(left).toHaveLength(0);
  });

  it(`S28: at most ${MAX_OUTSTANDING_STATES} outstanding states per scope; expired ones do not count`, async () => {
    const store = signInStore(env, freshScope());
    // Fill the table directly (10,000 RPCs would only slow the test), then go through put.
    await runInDurableObject(store, (_i, state) => {
      const far = Date.now() + 600_000;
      for (let i = 0; i < MAX_OUTSTANDING_STATES - 1; i++) {
        state.storage.sql.exec("INSERT INTO states (state, record, expires_at) VALUES (?, '{}', ?)", `s${i}`, far);
      }
    });
    const last = newSignInState();
    expect(await store.put(last, {}, 600_000)).toEqual({ ok: true, value: null });
    expect(await store.put(newSignInState(), {}, 600_000)).toEqual({ ok: false, error: "full" });
    // A consumed state frees its place at once.
    expect((await store.consume(last)).ok).toBe(true);
    expect((await store.put(newSignInState(), {}, 600_000)).ok).toBe(true);
    expect(await store.put(newSignInState(), {}, 600_000)).toEqual({ ok: false, error: "full" });
    // So does an expired one, before the alarm runs.
    await runInDurableObject(store, (_i, state) => {
      state.storage.sql.exec("UPDATE states SET expires_at = ? WHERE state = 's0'", Date.now() - 1);
    });
    expect((await store.put(newSignInState(), {}, 600_000)).ok).toBe(true);
  });
});

describe("sign-in rate limit (S28)", () => {
  it(`admits ${RATE_LIMIT} requests a minute per address, then refuses with a retry time`, async () => {
    const store = signInStore(env, freshScope());
    for (let i = 0; i < RATE_LIMIT; i++) expect((await store.hit("a")).ok).toBe(true);
    const refused = await store.hit("a");
    expect(refused).toMatchObject({ ok: false, error: "limited" });
    expect(!refused.ok && "retryAfterSeconds" in refused && refused.retryAfterSeconds).toBeGreaterThan(0);
    // Another address, and the same address on another scope, are counted apart.
    expect((await store.hit("b")).ok).toBe(true);
    expect((await signInStore(env, freshScope()).hit("a")).ok).toBe(true);
  });

  it("a request leaves the count once it is older than a minute; the alarm removes old hits", async () => {
    const store = signInStore(env, freshScope());
    for (let i = 0; i < RATE_LIMIT; i++) await store.hit("a");
    expect((await store.hit("a")).ok).toBe(false);
    // Age every counted request past the window (the test cannot wait a minute).
    await runInDurableObject(store, (_i, state) => {
      state.storage.sql.exec("UPDATE hits SET at = at - 60000");
    });
    expect((await store.hit("a")).ok).toBe(true);
    await runInDurableObject(store, (_i, state) => {
      state.storage.sql.exec("UPDATE hits SET at = at - 60000");
    });
    await runDurableObjectAlarm(store);
    const left = await runInDurableObject(store, (_i, state) =>
      state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM hits").one(),
    );
    expect(left.n).toBe(0);
  });

  it("clientAddressKey: CF-Connecting-IP; IPv6 by its /64; no header → one shared key", () => {
    const key = (ip?: string) => clientAddressKey(new Headers(ip ? { "CF-Connecting-IP": ip } : {}));
    expect(key("192.0.2.1")).toBe(key("::ffff:192.0.2.1"));
    expect(key("192.0.2.1")).not.toBe(key("192.0.2.2"));
    expect(key("2001:db8:1:2::1")).toBe(key("2001:db8:1:2:ffff::9"));
    expect(key("2001:db8:1:3::1")).not.toBe(key("2001:db8:1:2::1"));
    expect(key()).toBe("unknown");
    expect(key("not an address")).toBe("unknown");
  });
});
