/** The per-isolate sign context cache: expiry, invalidation, shared misses, failures, bound. */
import { describe, expect, it } from "vitest";
import { cachedSignContext, invalidateSignContexts, SIGN_CONTEXT_TTL_MS } from "../../../src/ssh/sign/context-cache";

function counter() {
  let calls = 0;
  return {
    load: async () => ++calls,
    get calls() {
      return calls;
    },
  };
}

describe("cachedSignContext", () => {
  it("serves a value until it expires, then loads again", async () => {
    const c = counter();
    const t = 1_000_000;
    expect(await cachedSignContext("m1", "r", c.load, t)).toBe(1);
    expect(await cachedSignContext("m1", "r", c.load, t + SIGN_CONTEXT_TTL_MS - 1)).toBe(1);
    expect(await cachedSignContext("m1", "r", c.load, t + SIGN_CONTEXT_TTL_MS)).toBe(2);
    expect(c.calls).toBe(2);
  });

  it("invalidation drops every role of that mount only", async () => {
    const a = counter();
    const b = counter();
    const t = 2_000_000;
    await cachedSignContext("m2", "r1", a.load, t);
    await cachedSignContext("m3", "r1", b.load, t);
    invalidateSignContexts("m2");
    expect(await cachedSignContext("m2", "r1", a.load, t)).toBe(2);
    expect(await cachedSignContext("m3", "r1", b.load, t)).toBe(1);
  });

  it("concurrent misses share one load", async () => {
    let calls = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const load = async () => {
      calls++;
      await gate;
      return "v";
    };
    const all = Promise.all([1, 2, 3].map(() => cachedSignContext("m4", "r", load, 3_000_000)));
    release();
    expect(await all).toEqual(["v", "v", "v"]);
    expect(calls).toBe(1);
  });

  it("does not keep a failed load", async () => {
    let calls = 0;
    const load = async () => {
      calls++;
      if (calls === 1) throw new Error("d1 down");
      return "ok";
    };
    await expect(cachedSignContext("m5", "r", load, 4_000_000)).rejects.toThrow("d1 down");
    expect(await cachedSignContext("m5", "r", load, 4_000_000)).toBe("ok");
  });

  it("stays bounded: the oldest entries go first", async () => {
    const t = 5_000_000;
    const first = counter();
    await cachedSignContext("m6", "first", first.load, t);
    for (let i = 0; i < 1100; i++) await cachedSignContext("m7", `r${i}`, async () => i, t);
    expect(await cachedSignContext("m6", "first", first.load, t)).toBe(2);
    // A recent one is still cached.
    expect(await cachedSignContext("m7", "r1099", async () => -1, t)).toBe(1099);
  });
});
