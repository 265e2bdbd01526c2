/**
 * The per-isolate TTL cache both wings use (src/lib/isolate-cache/; B18,
 * N2b): values are shared, pending loads never are; invalidation wins over a load that
 * started before it; failed and unwanted values are not kept; the size stays bounded.
 */
import { describe, expect, it } from "vitest";
import { estimateBytes, IsolateCache, isolateCacheStats } from "../../../src/lib/isolate-cache";

const newCache = <V>(maxEntries = 16) => new IsolateCache<V>({ name: "test", ttlMs: 1000, maxEntries });

/** A load that settles only when told to. */
function deferred<V>() {
  let resolve!: (v: V) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<V>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe("IsolateCache", () => {
  it("serves a stored value until its TTL (counted from the load's start) ends", async () => {
    const cache = newCache<number>();
    let calls = 0;
    const load = async () => ++calls;
    expect(await cache.get("k", load, { now: 10_000 })).toBe(1);
    expect(await cache.get("k", load, { now: 10_999 })).toBe(1);
    expect(await cache.get("k", load, { now: 11_000 })).toBe(2);
  });

  it("a miss whose load never settles (a cancelled request's I/O) blocks no other caller", async () => {
    const cache = newCache<string>();
    const stuck = deferred<string>();
    const first = cache.get("k", () => stuck.promise, { now: 1 });
    // Before the fix these awaited the first caller's promise and never settled.
    const others = await Promise.all([
      cache.get("k", async () => "a", { now: 1 }),
      cache.get("k", async () => "b", { now: 1 }),
    ]);
    expect(others).toEqual(["a", "b"]);
    // Later callers are served the settled value one of them stored.
    expect(["a", "b"]).toContain(await cache.get("k", async () => "c", { now: 2 }));
    // The stuck load settling late is harmless and is its own caller's answer.
    stuck.resolve("late");
    expect(await first).toBe("late");
  });

  it("never hands out a pending promise: each caller's answer comes from its own load or a settled value", async () => {
    const cache = newCache<string>();
    const loads = [deferred<string>(), deferred<string>(), deferred<string>()];
    const answers = loads.map((d) => cache.get("k", () => d.promise, { now: 1 }));
    loads[2]!.resolve("third");
    expect(await answers[2]).toBe("third");
    loads[0]!.resolve("first");
    loads[1]!.resolve("second");
    expect(await Promise.all(answers)).toEqual(["first", "second", "third"]);
  });

  it("a load that started before clear() does not store its (possibly stale) value", async () => {
    const cache = newCache<string>();
    const slow = deferred<string>();
    const pending = cache.get("k", () => slow.promise, { now: 1 });
    cache.clear();
    slow.resolve("read before the write");
    expect(await pending).toBe("read before the write");
    expect(cache.peek("k", 2)).toBeUndefined();
    expect(await cache.get("k", async () => "fresh", { now: 2 })).toBe("fresh");
  });

  it("deletePrefix drops exactly the keys under that prefix and voids loads in flight", async () => {
    const cache = newCache<string>();
    await cache.get("m1/a", async () => "1a", { now: 1 });
    await cache.get("m1/b", async () => "1b", { now: 1 });
    await cache.get("m10/a", async () => "10a", { now: 1 });
    const slow = deferred<string>();
    const pending = cache.get("m1/c", () => slow.promise, { now: 1 });
    cache.deletePrefix("m1/");
    slow.resolve("stale");
    await pending;
    expect(cache.peek("m1/a", 2)).toBeUndefined();
    expect(cache.peek("m1/b", 2)).toBeUndefined();
    expect(cache.peek("m1/c", 2)).toBeUndefined();
    expect(cache.peek("m10/a", 2)).toBe("10a");
  });

  it("keeps no failed load", async () => {
    const cache = newCache<string>();
    await expect(cache.get("k", async () => Promise.reject(new Error("d1 down")), { now: 1 })).rejects.toThrow(
      "d1 down",
    );
    expect(cache.size).toBe(0);
    expect(await cache.get("k", async () => "ok", { now: 1 })).toBe("ok");
  });

  it("keep: a value the caller does not want kept (a failed token lookup) is returned, not stored (N2b)", async () => {
    const cache = newCache<string | null>(4);
    for (let i = 0; i < 3; i++)
      await cache.get(`known${i}`, async () => `caller${i}`, { now: 1, keep: (v) => v !== null });
    for (let i = 0; i < 100; i++) {
      expect(await cache.get(`unknown${i}`, async () => null, { now: 1, keep: (v) => v !== null })).toBeNull();
    }
    // Nothing was inserted and nothing was evicted.
    expect(cache.size).toBe(3);
    for (let i = 0; i < 3; i++) expect(cache.peek(`known${i}`, 1)).toBe(`caller${i}`);
  });

  it("stays bounded: the oldest entries go first", async () => {
    const cache = newCache<number>(8);
    for (let i = 0; i < 20; i++) await cache.get(`k${i}`, async () => i, { now: 1 });
    expect(cache.size).toBe(8);
    expect(cache.peek("k11", 1)).toBeUndefined();
    expect(cache.peek("k12", 1)).toBe(12);
    expect(cache.peek("k19", 1)).toBe(19);
  });
});

describe("IsolateCache bounds (B18)", () => {
  it("refuses a cache without a bound or past the bounds every cache keeps", () => {
    expect(() => new IsolateCache({ name: "t", maxEntries: 10_001 })).toThrow(RangeError);
    expect(() => new IsolateCache({ name: "t", maxEntries: 0 })).toThrow(RangeError);
    expect(() => new IsolateCache({ name: "t", maxEntries: 1.5 })).toThrow(RangeError);
    expect(() => new IsolateCache({ name: "t", maxEntries: 10, maxBytes: 4 * 1024 * 1024 + 1 })).toThrow(RangeError);
    expect(() => new IsolateCache({ name: "t", maxEntries: 10_000, maxBytes: 4 * 1024 * 1024 })).not.toThrow();
  });

  it("bounds the bytes of its values: the oldest go first, and a value larger than the bound is not kept", () => {
    const cache = new IsolateCache<string>({
      name: "bytes",
      maxEntries: 100,
      maxBytes: 100,
      sizeOf: (v) => v.length,
    });
    cache.set("a", "x".repeat(40));
    cache.set("b", "x".repeat(40));
    cache.set("c", "x".repeat(40));
    expect([cache.peek("a"), cache.peek("b") !== undefined, cache.peek("c") !== undefined]).toEqual([
      undefined,
      true,
      true,
    ]);
    expect(cache.bytes).toBe(80);
    cache.set("huge", "x".repeat(101));
    expect(cache.peek("huge")).toBeUndefined();
    expect(cache.size).toBe(2);
    cache.delete("b");
    expect(cache.bytes).toBe(40);
    cache.clear();
    expect([cache.size, cache.bytes]).toEqual([0, 0]);
  });

  it("reports every cache's size and bounds by name", () => {
    const cache = new IsolateCache<number>({ name: "reported", maxEntries: 3 });
    cache.set("k", 1);
    expect(isolateCacheStats().find((s) => s.name === "reported")).toEqual({
      name: "reported",
      size: 1,
      bytes: 0,
      maxEntries: 3,
      maxBytes: null,
    });
  });

  it("estimates sizes of JSON-like values and stops counting past its limit", () => {
    expect(estimateBytes("abc")).toBe(22);
    expect(estimateBytes({ a: [1, 2] })).toBeGreaterThan(estimateBytes({ a: [1] }));
    expect(estimateBytes(new Uint8Array(1000))).toBeGreaterThanOrEqual(1000);
    expect(
      estimateBytes(
        Array.from({ length: 100_000 }, () => "x".repeat(100)),
        1000,
      ),
    ).toBeGreaterThan(1000);
  });
});
