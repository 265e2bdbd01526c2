import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  configure,
  enableJwtMount,
  hitsOf,
  login,
  mintJwt,
  serveDoc,
  testKey,
  writeRole,
} from "../../../helpers/jwt-auth";
import { uniqueName } from "../../../helpers/vault";

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(Date.now());
});

afterEach(() => {
  vi.useRealTimers();
});

/** A mount whose keys come from a JWKS the test serves at a fresh path. */
async function jwksMount(keys: object[]) {
  const jwksPath = `/${uniqueName("jwks")}`;
  const url = await serveDoc(jwksPath, { body: { keys } });
  const { path } = await enableJwtMount();
  await configure(path, { jwks_url: url, bound_issuer: "https://issuer.example" });
  await writeRole(path, "deploy", { role_type: "jwt", bound_audiences: ["keyway"], user_claim: "sub" });
  return { path, jwksPath };
}

const claims = { iss: "https://issuer.example", aud: "keyway", sub: "ci" };
const later = (ms: number) => vi.setSystemTime(Date.now() + ms);

describe("JWT login against a JWKS (S25)", () => {
  for (const alg of ["RS256", "ES256", "EdDSA"] as const) {
    it(`verifies ${alg} tokens with keys from the JWKS`, async () => {
      const key = await testKey(alg);
      const { path } = await jwksMount([key.jwk]);
      const answer = await login(path, { role: "deploy", jwt: await mintJwt(key, claims) });
      expect(answer.status).toBe(200);
    });
  }

  it("caches the set for 10 minutes, refetches once for an unknown kid, then waits out the cooldown", async () => {
    const a = await testKey("ES256");
    const b = await testKey("ES256");
    const { path, jwksPath } = await jwksMount([a.jwk]);
    const before = await hitsOf(jwksPath); // the config write's check
    expect((await login(path, { role: "deploy", jwt: await mintJwt(a, claims) })).status).toBe(200);
    expect((await login(path, { role: "deploy", jwt: await mintJwt(a, claims) })).status).toBe(200);
    expect(await hitsOf(jwksPath)).toBe(before + 1);

    // The provider rotates to b. Within 30 s of the last fetch, an unknown kid fetches nothing.
    await serveDoc(jwksPath, { body: { keys: [a.jwk, b.jwk] } });
    const early = await login(path, { role: "deploy", jwt: await mintJwt(b, claims) });
    expect(early.status).toBe(400);
    expect(early.json.errors).toEqual([
      "error validating token: error verifying token signature: failed to verify id token signature",
    ]);
    expect(await hitsOf(jwksPath)).toBe(before + 1);

    // After the cooldown: one refetch, and b verifies; a second unknown kid right after fetches nothing more.
    later(31_000);
    expect((await login(path, { role: "deploy", jwt: await mintJwt(b, claims) })).status).toBe(200);
    expect(await hitsOf(jwksPath)).toBe(before + 2);
    const stranger = await testKey("ES256");
    expect((await login(path, { role: "deploy", jwt: await mintJwt(stranger, claims) })).status).toBe(400);
    expect(await hitsOf(jwksPath)).toBe(before + 2);

    // Fresh for 10 minutes: no fetch; past them, one.
    later(9 * 60_000);
    expect((await login(path, { role: "deploy", jwt: await mintJwt(a, claims) })).status).toBe(200);
    expect(await hitsOf(jwksPath)).toBe(before + 2);
    later(61_000);
    expect((await login(path, { role: "deploy", jwt: await mintJwt(a, claims) })).status).toBe(200);
    expect(await hitsOf(jwksPath)).toBe(before + 3);
  });

  it("keeps the cached set for at most 1 h while refetches fail", async () => {
    const a = await testKey("RS256");
    const { path, jwksPath } = await jwksMount([a.jwk]);
    expect((await login(path, { role: "deploy", jwt: await mintJwt(a, claims) })).status).toBe(200);
    await serveDoc(jwksPath, { status: 503, body: "down" });
    later(11 * 60_000);
    expect((await login(path, { role: "deploy", jwt: await mintJwt(a, claims) })).status).toBe(200);
    later(55 * 60_000);
    expect((await login(path, { role: "deploy", jwt: await mintJwt(a, claims) })).status).toBe(200);
    later(5 * 60_000);
    const gone = await login(path, { role: "deploy", jwt: await mintJwt(a, claims) });
    expect(gone.status).toBe(400);
    expect(gone.json.errors[0]).toMatch(/^error validating token: error verifying token signature: fetching keys: /);
  });

  it("treats a redirect, a slow answer and an oversized set as a failed fetch", async () => {
    const a = await testKey("ES256");
    for (const doc of [
      { status: 302, location: "https://example.com/keys" },
      { body: { keys: [a.jwk] }, delayMs: 6000 },
      { body: { keys: [a.jwk], pad: "x".repeat(300 * 1024) } },
    ]) {
      const { path, jwksPath } = await jwksMount([a.jwk]);
      await serveDoc(jwksPath, doc);
      const answer = await login(path, { role: "deploy", jwt: await mintJwt(a, claims) });
      expect(answer.status).toBe(400);
      expect(answer.json.errors[0]).toMatch(/fetching keys: /);
    }
  });
});
