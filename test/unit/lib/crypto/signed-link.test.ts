/**
 * B23's signed links (src/lib/crypto/signed-link.ts): an HMAC over (purpose, id, expiry)
 * opens exactly that id for that purpose until the expiry; every other spelling, purpose,
 * id, expiry or key is refused.
 */
import { describe, expect, it } from "vitest";
import { SIGNED_LINK_HEADERS, signLink, verifySignedLink } from "../../../../src/lib/crypto/signed-link";

const KEY = "dGVzdC1oYXNoLWtleS10ZXN0LWhhc2gta2V5LXRlc3Q=";
const OTHER_KEY = "b3RoZXItaGFzaC1rZXktb3RoZXItaGFzaC1rZXktMTI=";
const NOW = 1_800_000_000_000;
const claim = { purpose: "registry-download", id: "modver-AbCdEfGhIjKlMnOp" };

describe("signed links (B23)", () => {
  it("round-trips within the lifetime and refuses once expired", async () => {
    const { expiry, signature } = await signLink(KEY, claim, NOW, 300);
    expect(expiry).toBe(NOW / 1000 + 300);
    expect(signature).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await verifySignedLink(KEY, claim, String(expiry), signature, NOW, 300)).toEqual({
      ok: true,
      expiresAt: expiry * 1000,
    });
    expect(await verifySignedLink(KEY, claim, String(expiry), signature, expiry * 1000, 300)).toEqual({
      ok: false,
      reason: "expired",
    });
  });

  it("binds purpose, id, expiry and key", async () => {
    const { expiry, signature } = await signLink(KEY, claim, NOW, 300);
    const e = String(expiry);
    for (const [k, c, x] of [
      [KEY, { ...claim, purpose: "keyway-plan-view" }, e],
      [KEY, { ...claim, id: `${claim.id}x` }, e],
      [KEY, claim, String(expiry + 1)],
      [OTHER_KEY, claim, e],
    ] as const)
      expect(await verifySignedLink(k, c, x, signature, NOW, 300)).toEqual({ ok: false, reason: "bad-signature" });
  });

  it("refuses malformed expiries and signatures, and signatures signed too far ahead", async () => {
    const { expiry, signature } = await signLink(KEY, claim, NOW, 300);
    for (const [x, s] of [
      [`0${expiry}`, signature],
      [`${expiry}\n`, signature],
      ["", signature],
      [String(expiry), `${signature}=`],
      [String(expiry), signature.slice(1)],
      [String(expiry), `${signature.slice(0, -1)}\u0000`],
    ])
      expect((await verifySignedLink(KEY, claim, x!, s!, NOW, 300)).ok).toBe(false);
    // Another spelling of the same bytes (non-zero padding bits) is refused too.
    const last = signature.at(-1)!;
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const respelled = `${signature.slice(0, -1)}${alphabet[alphabet.indexOf(last) ^ 1]}`;
    expect(await verifySignedLink(KEY, claim, String(expiry), respelled, NOW, 300)).toEqual({
      ok: false,
      reason: "malformed",
    });
    const future = await signLink(KEY, claim, NOW + 3600_000, 300);
    expect(await verifySignedLink(KEY, claim, String(future.expiry), future.signature, NOW, 300)).toEqual({
      ok: false,
      reason: "expired",
    });
  });

  it("names the headers of every answer", () => {
    expect(SIGNED_LINK_HEADERS).toEqual({ "Cache-Control": "no-store", "Referrer-Policy": "no-referrer" });
  });
});
