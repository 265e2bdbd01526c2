/** The per-isolate mount context caches (sign, creds): expiry, invalidation, unshared misses, failures, bound. */
import { describe, expect, it } from "vitest";
import { invalidateMountContexts, MOUNT_CONTEXT_TTL_MS, mountContextCache } from "../../../src/ssh/context-cache";

/** The cache most tests use; values are numbers or strings. */
const cache = mountContextCache<unknown>();
const cached = <T>(mount: string, role: string, load: () => Promise<T>, now: number) =>
  cache.get(mount, role, load, now) as Promise<T>;

function counter() {
  let calls = 0;
  return {
    load: async () => ++calls,
    get calls() {
      return calls;
    },
  };
}

describe("MountContextCache", () => {
  it("serves a value until it expires, then loads again", async () => {
    const c = counter();
    const t = 1_000_000;
    expect(await cached("m1", "r", c.load, t)).toBe(1);
    expect(await cached("m1", "r", c.load, t + MOUNT_CONTEXT_TTL_MS - 1)).toBe(1);
    expect(await cached("m1", "r", c.load, t + MOUNT_CONTEXT_TTL_MS)).toBe(2);
    expect(c.calls).toBe(2);
  });

  it("invalidation drops every role of that mount only", async () => {
    const a = counter();
    const b = counter();
    const t = 2_000_000;
    await cached("m2", "r1", a.load, t);
    await cached("m3", "r1", b.load, t);
    invalidateMountContexts("m2");
    expect(await cached("m2", "r1", a.load, t)).toBe(2);
    expect(await cached("m3", "r1", b.load, t)).toBe(1);
  });

  it("concurrent misses each run their own load: a pending load is never shared", async () => {
    // The first miss's load never settles, as a load of a request workerd cancelled.
    const stuck = cached("m4", "r", () => new Promise<string>(() => {}), 3_000_000);
    const others = await Promise.all([1, 2].map((n) => cached("m4", "r", async () => `v${n}`, 3_000_000)));
    expect(others).toEqual(["v1", "v2"]);
    void stuck;
  });

  it("does not keep a failed load", async () => {
    let calls = 0;
    const load = async () => {
      calls++;
      if (calls === 1) throw new Error("d1 down");
      return "ok";
    };
    await expect(cached("m5", "r", load, 4_000_000)).rejects.toThrow("d1 down");
    expect(await cached("m5", "r", load, 4_000_000)).toBe("ok");
  });

  it("stays bounded: the oldest entries go first", async () => {
    const t = 5_000_000;
    const first = counter();
    await cached("m6", "first", first.load, t);
    for (let i = 0; i < 1100; i++) await cached("m7", `r${i}`, async () => i, t);
    expect(await cached("m6", "first", first.load, t)).toBe(2);
    // A recent one is still cached.
    expect(await cached("m7", "r1099", async () => -1, t)).toBe(1099);
  });

  it("invalidateMountContexts clears that mount in every cache; each cache keeps its own values", async () => {
    const other = mountContextCache<string>();
    const t = 6_000_000;
    await cached("m8", "r", async () => "sign", t);
    await other.get("m8", "r", async () => "creds", t);
    // Same (mount, role), separate caches.
    expect(await cached("m8", "r", async () => "x", t)).toBe("sign");
    expect(await other.get("m8", "r", async () => "y", t)).toBe("creds");
    invalidateMountContexts("m8");
    expect(await cached("m8", "r", async () => "sign 2", t)).toBe("sign 2");
    expect(await other.get("m8", "r", async () => "creds 2", t)).toBe("creds 2");
  });
  it("a cache's own bound, and `keep` refusing to store a value (lookup's large answers)", async () => {
    const small = mountContextCache<string[]>(3);
    const t = 7_000_000;
    const keep = (roles: string[]) => roles.length <= 2;
    expect(await small.get("m9", "big", async () => ["a", "b", "c"], t, keep)).toEqual(["a", "b", "c"]);
    // Not kept: loaded again.
    expect(await small.get("m9", "big", async () => ["x"], t, keep)).toEqual(["x"]);
    // Kept now, and bounded at 3 entries: the oldest ("big") goes when a fourth arrives.
    for (const k of ["k1", "k2", "k3"]) await small.get("m9", k, async () => [k], t, keep);
    expect(await small.get("m9", "big", async () => ["y"], t, keep)).toEqual(["y"]);
    expect(await small.get("m9", "k3", async () => ["z"], t, keep)).toEqual(["k3"]);
  });
});
