import { describe, expect, it } from "vitest";
import { toBase64 } from "../../../../src/lib/bytes";
import { keyedHash, keyedHashesEqual, presentedValuesEqual, secretsEqual } from "../../../../src/lib/crypto/hmac";
import { isolateCacheStats } from "../../../../src/lib/isolate-cache";

describe("secretsEqual", () => {
  it("is true only for the same secret, also on repeated calls with one configured value", async () => {
    const configured = "configured-secret";
    expect(await secretsEqual("configured-secret", configured)).toBe(true);
    expect(await secretsEqual("configured-secreT", configured)).toBe(false);
    expect(await secretsEqual("", configured)).toBe(false);
    // The configured digest is kept per isolate; a second configured value must not reuse it.
    expect(await secretsEqual("configured-secret", "another-secret")).toBe(false);
    expect(await secretsEqual("another-secret", "another-secret")).toBe(true);
    expect(await secretsEqual("configured-secret", configured)).toBe(true);
  });
});

describe("keyedHash", () => {
  const secret = toBase64(new Uint8Array(32).fill(7));

  it("separates purposes and values, and is stable", async () => {
    const a = await keyedHash(secret, "ssh-otp:ssh", "value");
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(await keyedHash(secret, "ssh-otp:ssh", "value")).toBe(a);
    expect(await keyedHash(secret, "vault-token", "value")).not.toBe(a);
    expect(await keyedHash(secret, "ssh-otp:ssh", "value2")).not.toBe(a);
  });

  it("refuses a key shorter than 32 bytes", async () => {
    await expect(keyedHash(toBase64(new Uint8Array(16)), "p", "v")).rejects.toThrow("KEYWAY_HASH_KEY");
  });
});

describe("keyedHashesEqual", () => {
  it("is true only for the same hash, and false for different lengths", async () => {
    const secret = toBase64(new Uint8Array(32).fill(9));
    const a = await keyedHash(secret, "vault-token", "root");
    expect(keyedHashesEqual(a, await keyedHash(secret, "vault-token", "root"))).toBe(true);
    expect(keyedHashesEqual(a, await keyedHash(secret, "vault-token", "rooT"))).toBe(false);
    expect(keyedHashesEqual(a, a.slice(0, -1))).toBe(false);
    expect(keyedHashesEqual(a, `${a.slice(0, -1)}${a.endsWith("0") ? "1" : "0"}`)).toBe(false);
  });
});

describe("presentedValuesEqual (B18)", () => {
  it("compares values a client chose, of any length, and keeps nothing", async () => {
    const before = JSON.stringify(isolateCacheStats());
    expect(await presentedValuesEqual("csrf-value", "csrf-value")).toBe(true);
    expect(await presentedValuesEqual("csrf-value", "csrf-valuE")).toBe(false);
    expect(await presentedValuesEqual("", "csrf-value")).toBe(false);
    expect(await presentedValuesEqual("a\nb", "a\nb")).toBe(true);
    for (let i = 0; i < 100; i++) await presentedValuesEqual(crypto.randomUUID(), crypto.randomUUID());
    expect(JSON.stringify(isolateCacheStats())).toBe(before);
  });
});
