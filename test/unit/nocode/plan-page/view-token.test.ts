/**
 * The view token of decision N8: HMAC-SHA-256 under KEYWAY_HASH_KEY binding the run id
 * and the expiry, base64url, valid 24 hours.
 */
import { describe, expect, it } from "vitest";
import { fromBase64, toBase64Url } from "../../../../src/lib/bytes";
import { signViewToken, VIEW_TOKEN_TTL_SECONDS, verifyViewToken } from "../../../../src/nocode/plan-page/view-token";

const KEY = "dGVzdC1oYXNoLWtleS10ZXN0LWhhc2gta2V5LXRlc3Q=";
const OTHER_KEY = "b3RoZXItaGFzaC1rZXktb3RoZXItaGFzaC1rZXktMDE=";
const RUN = "run-AbCdEfGhIjKlMnOp";
const NOW = Date.UTC(2026, 4, 1, 12, 0, 0);
const HOUR = 3600_000;

describe("signViewToken / verifyViewToken (N8)", () => {
  it("signs `<expiry>.<base64url mac>` expiring 24 hours later", async () => {
    const token = await signViewToken(KEY, RUN, NOW);
    expect(token).toMatch(/^[0-9]+\.[A-Za-z0-9_-]{43}$/);
    const [expiry, mac] = token.split(".");
    expect(Number(expiry)).toBe(NOW / 1000 + VIEW_TOKEN_TTL_SECONDS);
    expect(fromBase64(mac!)).toHaveLength(32);
    expect(VIEW_TOKEN_TTL_SECONDS).toBe(86_400);
  });

  it("is deterministic for the same run, key and second, and differs by run", async () => {
    expect(await signViewToken(KEY, RUN, NOW)).toBe(await signViewToken(KEY, RUN, NOW + 999));
    expect(await signViewToken(KEY, RUN, NOW)).not.toBe(await signViewToken(KEY, "run-AbCdEfGhIjKlMnOq", NOW));
  });

  it("accepts its own token until the expiry, then refuses it", async () => {
    const token = await signViewToken(KEY, RUN, NOW);
    expect(await verifyViewToken(KEY, RUN, token, NOW)).toEqual({ ok: true, expiresAt: NOW + 24 * HOUR });
    expect((await verifyViewToken(KEY, RUN, token, NOW + 24 * HOUR - 1000)).ok).toBe(true);
    expect(await verifyViewToken(KEY, RUN, token, NOW + 24 * HOUR)).toEqual({ ok: false, reason: "expired" });
    expect(await verifyViewToken(KEY, RUN, token, NOW + 48 * HOUR)).toEqual({ ok: false, reason: "expired" });
  });

  it("binds the run id: a token for one run never opens another", async () => {
    const token = await signViewToken(KEY, RUN, NOW);
    expect(await verifyViewToken(KEY, "run-AbCdEfGhIjKlMnOq", token, NOW)).toEqual({
      ok: false,
      reason: "bad-signature",
    });
    // a run id that is a prefix or extension of the other must not collide either
    expect((await verifyViewToken(KEY, `${RUN}x`, token, NOW)).ok).toBe(false);
    expect((await verifyViewToken(KEY, RUN.slice(0, -1), token, NOW)).ok).toBe(false);
  });

  it("binds the expiry: moving it invalidates the MAC", async () => {
    const token = await signViewToken(KEY, RUN, NOW);
    const [expiry, mac] = token.split(".");
    const later = `${Number(expiry) + 3600}.${mac}`;
    expect(await verifyViewToken(KEY, RUN, later, NOW)).toEqual({ ok: false, reason: "bad-signature" });
    const earlier = `${Number(expiry) - 1}.${mac}`;
    expect(await verifyViewToken(KEY, RUN, earlier, NOW)).toEqual({ ok: false, reason: "bad-signature" });
  });

  it("is keyed: another KEYWAY_HASH_KEY does not verify it", async () => {
    const token = await signViewToken(KEY, RUN, NOW);
    expect(await verifyViewToken(OTHER_KEY, RUN, token, NOW)).toEqual({ ok: false, reason: "bad-signature" });
  });

  it("refuses a correctly signed token whose expiry is more than 24 h (plus a minute of skew) ahead", async () => {
    // Signed "in the future": two days from now, so its expiry is 3 days ahead of NOW.
    const future = await signViewToken(KEY, RUN, NOW + 48 * HOUR);
    expect(await verifyViewToken(KEY, RUN, future, NOW)).toEqual({ ok: false, reason: "expired" });
    const skewed = await signViewToken(KEY, RUN, NOW + 30_000);
    expect((await verifyViewToken(KEY, RUN, skewed, NOW)).ok).toBe(true);
  });

  it("refuses malformed tokens", async () => {
    const token = await signViewToken(KEY, RUN, NOW);
    const [expiry, mac] = token.split(".");
    const flipped = mac!.slice(0, 10) + (mac![10] === "A" ? "B" : "A") + mac!.slice(11);
    const cases = [
      "",
      ".",
      expiry!,
      `${expiry}.`,
      `.${mac}`,
      `0${expiry}.${mac}`,
      `+${expiry}.${mac}`,
      `${expiry}.${mac}=`,
      `${expiry}.${mac}.x`,
      `${expiry}.${mac!.slice(0, 42)}`,
      `${expiry}.${mac!.replace(/.$/, "+")}`,
      `${expiry}.${toBase64Url(new Uint8Array(31))}`,
      `${expiry} .${mac}`,
      `${expiry}.${mac}${"A".repeat(100)}`,
      "x".repeat(10_000),
    ];
    for (const bad of cases) {
      const verdict = await verifyViewToken(KEY, RUN, bad, NOW);
      expect(verdict, bad.slice(0, 80)).toEqual({ ok: false, reason: "malformed" });
    }
    expect(await verifyViewToken(KEY, RUN, `${expiry}.${flipped}`, NOW)).toEqual({
      ok: false,
      reason: "bad-signature",
    });
  });

  it("refuses a MAC whose unused padding bits are set (one byte string, one spelling)", async () => {
    const token = await signViewToken(KEY, RUN, NOW);
    const [expiry, mac] = token.split(".");
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const last = alphabet.indexOf(mac!.at(-1)!);
    // 43 characters carry 258 bits for 256: the last character's low 2 bits are padding.
    const respelled = `${expiry}.${mac!.slice(0, -1)}${alphabet[last | 1]}`;
    expect(respelled).not.toBe(token);
    expect(await verifyViewToken(KEY, RUN, respelled, NOW)).toEqual({ ok: false, reason: "malformed" });
  });
});
