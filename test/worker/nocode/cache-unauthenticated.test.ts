/**
 * N2b (issue 14 finding 11): an unauthenticated /api/v2 request may not clear, invalidate
 * or evict the per-isolate cache, nor insert entries keyed by what it sent (a failed
 * token lookup). Checked on the isolate's real cache (src/nocode/cache.ts) through the
 * Worker's real fetch handler, for every write method and several paths.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { hashNocodeToken } from "../../../src/nocode/auth";
import { cachedNocode } from "../../../src/nocode/cache";
import { bootstrapOrg, createTeam, createTeamToken, tfe } from "../../helpers/nocode";

/** A time far ahead, so a stored sentinel cannot expire during the test, whatever the load. */
const FAR = Date.now() + 10 * 365 * 86_400_000;

const WRITE_METHODS = ["POST", "PATCH", "PUT", "DELETE"] as const;
const PATHS = [
  "organizations",
  "organizations/acme/teams",
  "no-code-modules/nocode-abc",
  "teams/team-x/authentication-token",
  "nowhere",
];

/** Store a sentinel the next reads must find; answers whether it is still there. */
async function sentinel(): Promise<() => Promise<boolean>> {
  // A key of a real kind (`module:`) that no module id matches.
  const key = `module:test-sentinel-${crypto.randomUUID()}` as const;
  await cachedNocode(key, async () => "kept", { now: FAR });
  return async () => (await cachedNocode(key, async () => "reloaded", { now: FAR })) === "kept";
}

describe("N2b: unauthenticated requests leave the no-code cache alone", () => {
  it("writes without a token, with an unknown token or a malformed one clear nothing", async () => {
    const stillCached = await sentinel();
    const credentials: (string | null)[] = [
      null,
      `AAAAAAAAAAAAAA.atlasv1.${"x".repeat(67)}`,
      "not-a-token",
      "test-admin-token-wrong",
    ];
    for (const method of WRITE_METHODS) {
      for (const path of PATHS) {
        for (const token of credentials) {
          const answer = await tfe(method, path, { token, body: { data: { type: "x" } } });
          expect(answer.status, `${method} ${path}`).toBe(401);
        }
      }
    }
    expect(await stillCached()).toBe(true);
  });

  it("a failed token lookup is not kept: unknown tokens neither fill the cache nor evict entries", async () => {
    const stillCached = await sentinel();
    const unknown = Array.from(
      { length: 40 },
      (_, i) => `${String(i).padStart(14, "u")}.atlasv1.${crypto.randomUUID().replaceAll("-", "")}`,
    );
    for (const token of unknown) expect((await tfe("GET", "organizations", { token })).status).toBe(401);
    for (const token of unknown.slice(0, 5)) {
      const hash = await hashNocodeToken(env, token);
      let loaded = false;
      await cachedNocode(`token:${hash}`, async () => {
        loaded = true;
        return null;
      });
      expect(loaded, "an unknown token's lookup must not be cached").toBe(true);
    }
    expect(await stillCached()).toBe(true);
  });

  it("an authenticated write still clears the cache (this isolate sees its own writes)", async () => {
    const { org } = await bootstrapOrg();
    const teamId = await createTeam(org);
    const stillCached = await sentinel();
    await createTeamToken(teamId);
    expect(await stillCached()).toBe(false);
  });
});
