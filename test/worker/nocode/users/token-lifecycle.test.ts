/**
 * Decision N13: user, team and organization tokens
 * carry `created-at`, `last-used-at` (written at most once a minute per token, after the
 * answer) and an optional `expired-at` (then 401); `GET|DELETE /authentication-tokens/:id`
 * (the user or ADMIN_TOKEN), `DELETE /teams/:id/authentication-token` and `DELETE
 * /organizations/:org/authentication-token` revoke at once on this isolate.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { LAST_USED_WRITE_INTERVAL_MS } from "../../../../src/nocode/access/auth";
import { clearNocodeCache } from "../../../../src/nocode/cache";
import { ADMIN, bootstrapOrg, createOrgToken, createTeam, createUser, tfe } from "../../../helpers/nocode";

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** Create a user token; returns the token and its id. */
async function userToken(userId: string, attributes: Record<string, unknown> = {}, token: string = ADMIN) {
  const res = await tfe("POST", `users/${userId}/authentication-tokens`, {
    token,
    body: { data: { type: "authentication-tokens", attributes } },
  });
  expect(res.status, res.text).toBe(201);
  return { token: res.json.data.attributes.token as string, id: res.json.data.id as string, data: res.json.data };
}

/** Read a token's stored last-used-at directly (epoch ms or null). */
async function storedLastUsed(id: string): Promise<number | null> {
  const row = await env.DB.prepare("SELECT last_used_at FROM nocode_tokens WHERE id = ?")
    .bind(id)
    .first<{ last_used_at: number | null }>();
  return row?.last_used_at ?? null;
}

describe("N13: user tokens can be read and revoked", () => {
  it("GET /authentication-tokens/:id shows HCP's shape without the secret; DELETE revokes it at once", async () => {
    const user = await createUser();
    const t = await userToken(user.id, { description: "laptop" }, user.token);
    const read = await tfe("GET", `authentication-tokens/${t.id}`, { token: user.token });
    expect(read.status).toBe(200);
    expect(read.json.data).toMatchObject({
      id: t.id,
      type: "authentication-tokens",
      attributes: { description: "laptop", token: null, "last-used-at": null, "expired-at": null },
      relationships: { "created-by": { data: { id: user.id, type: "users" } } },
    });
    expect(read.json.data.attributes["created-at"]).toMatch(ISO);

    expect((await tfe("GET", `users/${user.id}/account`, { token: t.token })).status).toBe(404); // a valid token, an unknown path
    expect((await tfe("DELETE", `authentication-tokens/${t.id}`, { token: user.token })).status).toBe(204);
    // Revoked: 401 right away on this isolate, and the id is gone.
    expect((await tfe("GET", "account/details", { token: t.token })).status).toBe(401);
    expect((await tfe("GET", `authentication-tokens/${t.id}`, { token: user.token })).status).toBe(404);
    expect((await tfe("DELETE", `authentication-tokens/${t.id}`, { token: user.token })).status).toBe(404);
    // The user's other token is untouched.
    expect((await tfe("GET", "account/details", { token: user.token })).status).toBe(200);
  });

  it("a user may revoke its own current token; ADMIN_TOKEN may revoke anyone's", async () => {
    const user = await createUser();
    const me = await tfe("GET", `users/${user.id}/authentication-tokens`, { token: user.token });
    expect(me.status).toBe(200);
    expect(me.json.data).toHaveLength(1);
    const other = await userToken(user.id);
    expect(
      (await tfe("GET", `users/${user.id}/authentication-tokens`, { token: ADMIN })).json.data
        .map((d: { id: string }) => d.id)
        .sort(),
    ).toEqual([me.json.data[0].id, other.id].sort());
    expect((await tfe("DELETE", `authentication-tokens/${me.json.data[0].id}`, { token: user.token })).status).toBe(
      204,
    );
    expect((await tfe("GET", "account/details", { token: user.token })).status).toBe(401);
    expect((await tfe("DELETE", `authentication-tokens/${other.id}`, { token: ADMIN })).status).toBe(204);
    expect((await tfe("GET", "account/details", { token: other.token })).status).toBe(401);
  });

  it("another user, an owner, a team or an organization token gets 404 and revokes nothing", async () => {
    const { org, ownerToken, ownersTeamId } = await bootstrapOrg();
    const victim = await createUser();
    const t = await userToken(victim.id);
    const teamToken = (await tfe("POST", `teams/${ownersTeamId}/authentication-token`, { token: ADMIN })).json.data
      .attributes.token;
    for (const token of [(await createUser()).token, ownerToken, teamToken, await createOrgToken(org)]) {
      expect((await tfe("GET", `authentication-tokens/${t.id}`, { token })).status).toBe(404);
      expect((await tfe("DELETE", `authentication-tokens/${t.id}`, { token })).status).toBe(404);
      expect((await tfe("GET", `users/${victim.id}/authentication-tokens`, { token })).status).toBe(404);
    }
    expect((await tfe("GET", "account/details", { token: t.token })).status).toBe(200);
  });
});

describe("N13: team and organization tokens", () => {
  it("DELETE /teams/:id/authentication-token and /organizations/:org/authentication-token revoke at once; the token reads through /authentication-tokens/:id", async () => {
    const { org, ownerToken } = await bootstrapOrg();
    const teamId = await createTeam(org);
    const minted = await tfe("POST", `teams/${teamId}/authentication-token`, { token: ownerToken });
    const teamToken = minted.json.data.attributes.token;
    const read = await tfe("GET", `authentication-tokens/${minted.json.data.id}`, { token: ownerToken });
    expect(read.status).toBe(200);
    expect(read.json.data.attributes).toMatchObject({ token: null, "expired-at": null });
    expect(read.json.data.relationships.team.data).toEqual({ id: teamId, type: "teams" });
    expect((await tfe("GET", `organizations/${org}`, { token: teamToken })).status).toBe(200);
    expect((await tfe("DELETE", `teams/${teamId}/authentication-token`, { token: ownerToken })).status).toBe(204);
    expect((await tfe("GET", `organizations/${org}`, { token: teamToken })).status).toBe(401);

    const orgToken = await createOrgToken(org, ownerToken);
    expect((await tfe("GET", `organizations/${org}`, { token: orgToken })).status).toBe(200);
    expect((await tfe("DELETE", `organizations/${org}/authentication-token`, { token: ownerToken })).status).toBe(204);
    expect((await tfe("GET", `organizations/${org}`, { token: orgToken })).status).toBe(401);
    expect((await tfe("DELETE", `organizations/${org}/authentication-token`, { token: ownerToken })).status).toBe(404);
  });

  it("team and organization tokens accept an expiry", async () => {
    const { org, ownerToken } = await bootstrapOrg();
    const at = new Date(Date.now() + 3_600_000).toISOString();
    const body = { data: { type: "authentication-tokens", attributes: { "expired-at": at } } };
    const team = await tfe("POST", `teams/${await createTeam(org)}/authentication-token`, { token: ownerToken, body });
    expect(team.status).toBe(201);
    expect(team.json.data.attributes["expired-at"]).toBe(at);
    const organization = await tfe("POST", `organizations/${org}/authentication-token`, { token: ownerToken, body });
    expect(organization.status).toBe(201);
    expect(organization.json.data.attributes["expired-at"]).toBe(at);
    const past = await tfe("POST", `organizations/${org}/authentication-token`, {
      token: ownerToken,
      body: { data: { attributes: { "expired-at": "2001-01-01T00:00:00Z" } } },
    });
    expect(past.status).toBe(422);
  });
});

describe("N13: expiry", () => {
  it("a token works until its expired-at, then answers 401 (even while cached)", async () => {
    const user = await createUser();
    const at = new Date(Date.now() + 1500);
    const t = await userToken(user.id, { "expired-at": at.toISOString() });
    expect(t.data.attributes["expired-at"]).toBe(at.toISOString());
    expect((await tfe("GET", "account/details", { token: t.token })).status).toBe(200);
    await new Promise((r) => setTimeout(r, at.getTime() - Date.now() + 50));
    // No cache clear: the lookup may still be cached, and expiry is checked on every request.
    expect((await tfe("GET", "account/details", { token: t.token })).status).toBe(401);
    expect((await tfe("GET", "account/details", { token: t.token })).text).toBe(
      '{"errors":[{"status":"401","title":"unauthorized"}]}',
    );
  });

  it("an expired token stored in D1 is 401 on a cold cache", async () => {
    const user = await createUser();
    const t = await userToken(user.id);
    await env.DB.prepare("UPDATE nocode_tokens SET expired_at = ? WHERE id = ?")
      .bind(Date.now() - 1, t.id)
      .run();
    clearNocodeCache();
    expect((await tfe("GET", "account/details", { token: t.token })).status).toBe(401);
  });
});

describe("N13: last-used-at", () => {
  it("is written after a request, at most once a minute per token", async () => {
    const user = await createUser();
    const t = await userToken(user.id);
    expect(await storedLastUsed(t.id)).toBeNull();
    const start = Date.now();
    expect((await tfe("GET", "account/details", { token: t.token })).status).toBe(200);
    const first = await storedLastUsed(t.id);
    expect(first).not.toBeNull();
    expect(first!).toBeGreaterThanOrEqual(start);
    clearNocodeCache();
    expect((await tfe("GET", "account/details", { token: t.token })).status).toBe(200);
    expect(await storedLastUsed(t.id)).toBe(first);
    const read = await tfe("GET", `authentication-tokens/${t.id}`, { token: ADMIN });
    expect(read.json.data.attributes["last-used-at"]).toBe(new Date(first!).toISOString());

    // A minute later (moved back in D1, as if it were), the next use writes it again.
    const old = first! - LAST_USED_WRITE_INTERVAL_MS - 1;
    await env.DB.prepare("UPDATE nocode_tokens SET last_used_at = ? WHERE id = ?").bind(old, t.id).run();
    clearNocodeCache();
    expect((await tfe("GET", "account/details", { token: t.token })).status).toBe(200);
    expect(await storedLastUsed(t.id)).toBeGreaterThan(old);
  });
});
