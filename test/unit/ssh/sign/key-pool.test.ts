/**
 * The per-isolate pool of pre-generated keys for `issue` (src/ssh/sign/key-pool.ts):
 * bounded, filled one fill at a time, and never handing out a key twice. The generator is a
 * counter here (real RSA generation is covered by test/worker/ssh/sign/issue-key-pool.test.ts).
 */
import { describe, expect, it } from "vitest";
import type { GeneratedSshKeyPair } from "../../../../src/lib/crypto/ssh-keys-and-certificates";
import { PregeneratedKeys, poolFor, RSA_2048_POOL_CAPACITY, rsa2048Pool } from "../../../../src/ssh/sign/key-pool";

/** A generator of distinct fake key pairs that counts its calls; `gate` holds each generation. */
function counter(options: { failAt?: number } = {}) {
  let made = 0;
  const generate = async (): Promise<GeneratedSshKeyPair> => {
    await Promise.resolve();
    made++;
    if (options.failAt === made) throw new Error("generation failed");
    return { privateKeyPem: `key-${made}`, publicKeyText: `pub-${made}` } as unknown as GeneratedSshKeyPair;
  };
  return { generate, made: () => made };
}

/** Quiet moments of 1 ms, so the tests do not wait. */
const FAST = { quietMs: 1, maxWaitMs: 1000 };

describe("PregeneratedKeys", () => {
  it("starts empty and fills up to its capacity, no further", async () => {
    const gen = counter();
    const pool = new PregeneratedKeys(3, gen.generate, FAST);
    expect(pool.size).toBe(0);
    expect(pool.take()).toBeUndefined();
    await pool.fill();
    expect(pool.size).toBe(3);
    await pool.fill();
    expect(pool.size).toBe(3);
    expect(gen.made()).toBe(3);
  });

  it("runs one fill at a time: concurrent fills never overfill it", async () => {
    const gen = counter();
    const pool = new PregeneratedKeys(4, gen.generate, FAST);
    await Promise.all([pool.fill(), pool.fill(), pool.fill(), pool.fill()]);
    expect(pool.size).toBe(4);
    expect(gen.made()).toBe(4);
  });

  it("never hands out a key twice, also while a fill is running", async () => {
    const gen = counter();
    const pool = new PregeneratedKeys(4, gen.generate, FAST);
    await pool.fill();
    const seen: string[] = [];
    for (let round = 0; round < 5; round++) {
      const filling = pool.fill();
      // Takes interleaved with the running fill.
      for (let i = 0; i < 3; i++) {
        const key = pool.take();
        if (key) seen.push(key.privateKeyPem);
        await Promise.resolve();
      }
      await filling;
      await pool.fill();
      expect(pool.size).toBeLessThanOrEqual(4);
    }
    while (pool.size > 0) seen.push(pool.take()!.privateKeyPem);
    expect(seen.length).toBeGreaterThan(4);
    expect(new Set(seen).size).toBe(seen.length);
    // Every key generated was handed out at most once, and none is left behind in the pool.
    expect(seen.length).toBeLessThanOrEqual(gen.made());
    expect(pool.take()).toBeUndefined();
  });

  it("a failed generation ends the fill quietly and keeps the keys already made", async () => {
    const gen = counter({ failAt: 3 });
    const pool = new PregeneratedKeys(4, gen.generate, FAST);
    await expect(pool.fill()).resolves.toBeUndefined();
    expect(pool.size).toBe(2);
    await pool.fill();
    expect(pool.size).toBe(4);
  });
});

describe("PregeneratedKeys generates only in quiet moments", () => {
  it("generates nothing while keys keep being asked for, and gives up after maxWaitMs", async () => {
    const gen = counter();
    const pool = new PregeneratedKeys(4, gen.generate, { quietMs: 20, maxWaitMs: 200 });
    let asking = true;
    const demand = (async () => {
      while (asking) {
        expect(pool.take()).toBeUndefined();
        await new Promise((r) => setTimeout(r, 2));
      }
    })();
    const started = Date.now();
    await pool.fill();
    asking = false;
    await demand;
    expect(gen.made()).toBe(0);
    expect(pool.size).toBe(0);
    // It stopped waiting after about maxWaitMs.
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it("fills once the requests stop", async () => {
    const gen = counter();
    const pool = new PregeneratedKeys(2, gen.generate, { quietMs: 5, maxWaitMs: 1000 });
    pool.take();
    await pool.fill();
    expect(pool.size).toBe(2);
  });
});

describe("poolFor", () => {
  it("pools RSA-2048 only, with a small bound", () => {
    expect(poolFor({ kind: "rsa", bits: 2048 })).toBe(rsa2048Pool);
    expect(rsa2048Pool.capacity).toBe(RSA_2048_POOL_CAPACITY);
    expect(RSA_2048_POOL_CAPACITY).toBeLessThanOrEqual(8);
    expect(poolFor({ kind: "rsa", bits: 3072 })).toBeNull();
    expect(poolFor({ kind: "rsa", bits: 4096 })).toBeNull();
    expect(poolFor({ kind: "ec", bits: 256 })).toBeNull();
    expect(poolFor({ kind: "ed25519", bits: 256 })).toBeNull();
  });
});
