/**
 * N2b: an unauthenticated /api/v2 request may not clear, invalidate
 * or evict the per-isolate cache, nor insert entries keyed by what it sent (a failed
 * token lookup). Checked on the isolate's real cache (src/nocode/cache.ts) through the
 * Worker's real fetch handler, for every write method and several paths.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { hashNocodeToken } from "../../../src/nocode/access/auth";
import { cachedNocode } from "../../../src/nocode/cache";
import { bootstrapOrg, createMember, createTeam, createTeamToken, tfe } from "../../helpers/nocode";
import { workerRequest } from "../../helpers/worker-request";

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

  it("B18: POSTs under /app without a session (sign-in, sign-out, any form, made-up cookies and CSRF) clear nothing", async () => {
    const stillCached = await sentinel();
    const cookie = () => crypto.randomUUID().replaceAll("-", "").padEnd(43, "A");
    for (const path of [
      "/app/~/sign-in",
      "/app/~/sign-out",
      "/app/acme/workspaces/ws/upgrade",
      "/app/x/modules/y/rollouts",
    ]) {
      const res = await workerRequest(
        `http://keyway.test${path}`,
        {
          method: "POST",
          headers: {
            "Content-Type": "application/x-www-form-urlencoded",
            Cookie: `keyway_console=${cookie()}; __Host-keyway_console=${cookie()}; __Host-keyway_console_sign_in=${cookie()}`,
          },
          body: new URLSearchParams({ csrf: cookie(), token: "abcdefghijklmn.atlasv1.nope" }).toString(),
        },
        { outsideContract: "console pages are HTML, outside the API documents" },
      );
      expect([401, 403], path).toContain(res.status);
    }
    expect(await stillCached()).toBe(true);
  });

  it("B18: an authenticated write refused for lack of rights clears nothing", async () => {
    const { org } = await bootstrapOrg();
    const member = await createMember(org);
    const stillCached = await sentinel();
    const refused = await tfe("POST", `organizations/${org}/teams`, {
      token: member.token,
      body: { data: { type: "teams", attributes: { name: "nope" } } },
    });
    expect([403, 404]).toContain(refused.status);
    expect(await stillCached()).toBe(true);
  });

  it("B18: a signed-in console POST with a wrong CSRF token clears nothing", async () => {
    const { ownerToken } = await bootstrapOrg();
    const origin = "http://127.0.0.1";
    const html = { outsideContract: "console pages are HTML, outside the API documents" };
    const form = await workerRequest(`${origin}/app/~/sign-in`, { method: "GET" }, html);
    const preSession = form.headers.getSetCookie()[0]!.split(";")[0]!;
    const csrf = /name="csrf" value="([^"]+)"/.exec(form.text)![1]!;
    const signedIn = await workerRequest(
      `${origin}/app/~/sign-in`,
      {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded", Cookie: preSession },
        body: new URLSearchParams({ csrf, token: ownerToken }).toString(),
        redirect: "manual",
      },
      html,
    );
    expect(signedIn.status).toBe(303);
    const session = signedIn.headers
      .getSetCookie()
      .find((c) => c.startsWith("keyway_console="))!
      .split(";")[0]!;
    const stillCached = await sentinel();
    const refused = await workerRequest(
      `${origin}/app/~/sign-out`,
      {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded", Cookie: session },
        body: "csrf=wrong",
      },
      html,
    );
    expect(refused.status).toBe(403);
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
