/**
 * Tokens of the no-code service (N9, B2): user tokens (ADMIN_TOKEN or that user), team
 * tokens and organization tokens (ADMIN_TOKEN, owners, the organization token; one each,
 * a new one replaces the old). Stored only as keyed hashes.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { keyedHash } from "../../../../src/lib/crypto/hmac";
import { authenticateNocode } from "../../../../src/nocode/access/auth";
import {
  addTeamMembers,
  bootstrapOrg,
  createMember,
  createOrgToken,
  createTeam,
  createTeamToken,
  createUser,
  tfe,
} from "../../../helpers/nocode";

const TOKEN_SHAPE = /^[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9]{60,}$/;

const bearer = (token: string) => new Headers({ Authorization: `Bearer ${token}` });

describe("user tokens", () => {
  it("ADMIN_TOKEN creates one: 201 authentication-tokens, token in HCP's shape", async () => {
    const user = await createUser();
    const res = await tfe("POST", `users/${user.id}/authentication-tokens`, {
      body: { data: { type: "authentication-tokens", attributes: { description: "ci" } } },
    });
    expect(res.status).toBe(201);
    expect(res.json.data).toMatchObject({
      type: "authentication-tokens",
      attributes: { description: "ci", "expired-at": null },
    });
    expect(res.json.data.id).toMatch(/^at-[A-Za-z0-9]{16}$/);
    expect(res.json.data.attributes.token).toMatch(TOKEN_SHAPE);
    expect(res.json.data.relationships["created-by"].data).toEqual({ id: user.id, type: "users" });
  });

  it("the user creates its own; several stay valid at once; a body is optional", async () => {
    const user = await createUser();
    const second = await tfe("POST", `users/${user.id}/authentication-tokens`, { token: user.token });
    expect(second.status).toBe(201);
    const third = await tfe("POST", `users/${user.username}/authentication-tokens`, {
      token: second.json.data.attributes.token,
      body: {},
    });
    expect(third.status).toBe(201);
    for (const token of [user.token, second.json.data.attributes.token, third.json.data.attributes.token]) {
      expect(await authenticateNocode(env, bearer(token))).toEqual({
        kind: "user",
        userId: user.id,
        username: user.username,
      });
    }
  });

  it("another user, a team token or an organization token gets 404 (N9, N10)", async () => {
    const { org, owner, ownersTeamId } = await bootstrapOrg();
    const victim = await createUser();
    await addTeamMembers(ownersTeamId, [victim.username]);
    for (const token of [owner.token, await createTeamToken(ownersTeamId), await createOrgToken(org)]) {
      const res = await tfe("POST", `users/${victim.id}/authentication-tokens`, { token });
      expect(res.status).toBe(404);
    }
    expect((await tfe("POST", "users/user-AAAAAAAAAAAAAAAA/authentication-tokens")).status).toBe(404);
  });

  it("422 for a non-string description or an expiry that is not a future ISO 8601 time (N13); 400 for malformed JSON", async () => {
    const user = await createUser();
    const bad = await tfe("POST", `users/${user.id}/authentication-tokens`, {
      body: { data: { attributes: { description: 5 } } },
    });
    expect(bad.status).toBe(422);
    expect(bad.json.errors[0].source.pointer).toBe("/data/attributes/description");
    for (const expiredAt of ["2020-01-01T00:00:00Z", "tomorrow", 5, "2030-01-01"]) {
      const exp = await tfe("POST", `users/${user.id}/authentication-tokens`, {
        body: { data: { attributes: { "expired-at": expiredAt } } },
      });
      expect(exp.status, String(expiredAt)).toBe(422);
      expect(exp.json.errors[0].source.pointer).toBe("/data/attributes/expired-at");
    }
    expect((await tfe("POST", `users/${user.id}/authentication-tokens`, { rawBody: "{nope" })).status).toBe(400);
  });

  it("is stored only as its keyed hash (B2)", async () => {
    const user = await createUser();
    const hash = await keyedHash(env.KEYWAY_HASH_KEY, "tfe-token", user.token);
    const rows = await env.DB.prepare("SELECT * FROM nocode_tokens WHERE subject_id = ?").bind(user.id).all();
    expect(rows.results).toHaveLength(1);
    expect(rows.results[0]).toMatchObject({ hash, kind: "user", organization: null });
    expect(JSON.stringify(rows.results)).not.toContain(user.token);
    expect(JSON.stringify(rows.results)).not.toContain(user.token.split(".atlasv1.")[1]);
  });
});

describe("team tokens", () => {
  it("resolve to the team; a new one replaces the old", async () => {
    const { org } = await bootstrapOrg();
    const teamId = await createTeam(org, { "manage-projects": true });
    const first = await createTeamToken(teamId);
    expect(first).toMatch(TOKEN_SHAPE);
    expect(await authenticateNocode(env, bearer(first))).toEqual({ kind: "team", teamId, organization: org });
    const second = await createTeamToken(teamId);
    expect(await authenticateNocode(env, bearer(first))).toBeNull();
    expect((await tfe("GET", `organizations/${org}`, { token: first })).status).toBe(401);
    expect((await tfe("GET", `organizations/${org}`, { token: second })).status).toBe(200);
    const rows = await env.DB.prepare("SELECT count(*) AS n FROM nocode_tokens WHERE kind = 'team' AND subject_id = ?")
      .bind(teamId)
      .first<{ n: number }>();
    expect(rows?.n).toBe(1);
  });

  it("ADMIN_TOKEN, an owner, the owners' team token and the organization token may create one; others 404", async () => {
    const { org, ownerToken, ownersTeamId } = await bootstrapOrg();
    const teamId = await createTeam(org);
    for (const token of [undefined, ownerToken, await createTeamToken(ownersTeamId), await createOrgToken(org)]) {
      expect((await tfe("POST", `teams/${teamId}/authentication-token`, { token })).status).toBe(201);
    }
    const member = await createMember(org, {
      "manage-workspaces": true,
      "manage-projects": true,
      "manage-modules": true,
      "manage-agent-pools": true,
    });
    const other = await bootstrapOrg();
    for (const token of [
      member.token,
      await createTeamToken(teamId),
      other.ownerToken,
      await createOrgToken(other.org),
    ]) {
      expect((await tfe("POST", `teams/${teamId}/authentication-token`, { token })).status).toBe(404);
    }
  });

  it("DELETE revokes it (204), then 404", async () => {
    const { org, ownerToken } = await bootstrapOrg();
    const teamId = await createTeam(org);
    const token = await createTeamToken(teamId);
    expect((await tfe("DELETE", `teams/${teamId}/authentication-token`, { token: ownerToken })).status).toBe(204);
    expect((await tfe("GET", `organizations/${org}`, { token })).status).toBe(401);
    expect((await tfe("DELETE", `teams/${teamId}/authentication-token`, { token: ownerToken })).status).toBe(404);
  });
});

describe("organization tokens", () => {
  it("ADMIN_TOKEN creates one; it resolves to the organization", async () => {
    const { org } = await bootstrapOrg();
    const res = await tfe("POST", `organizations/${org}/authentication-token`);
    expect(res.status).toBe(201);
    expect(res.json.data).toMatchObject({
      type: "authentication-tokens",
      relationships: { organization: { data: { id: org, type: "organizations" } } },
    });
    const token = res.json.data.attributes.token;
    expect(token).toMatch(TOKEN_SHAPE);
    expect(await authenticateNocode(env, bearer(token))).toEqual({ kind: "organization", organization: org });
  });

  it("an owner or the organization token may replace it; the old one stops working", async () => {
    const { org, ownerToken } = await bootstrapOrg();
    const first = await createOrgToken(org, ownerToken);
    const second = await createOrgToken(org, first);
    expect((await tfe("GET", `organizations/${org}`, { token: first })).status).toBe(401);
    expect((await tfe("GET", `organizations/${org}`, { token: second })).status).toBe(200);
  });

  it("non-owner members, other organizations and unknown organizations get 404", async () => {
    const { org } = await bootstrapOrg();
    const member = await createMember(org, {
      "manage-workspaces": true,
      "manage-projects": true,
      "manage-modules": true,
      "manage-agent-pools": true,
    });
    const other = await bootstrapOrg();
    for (const token of [
      member.token,
      await createTeamToken(member.teamId),
      other.ownerToken,
      await createOrgToken(other.org),
    ]) {
      expect((await tfe("POST", `organizations/${org}/authentication-token`, { token })).status).toBe(404);
    }
    expect((await tfe("POST", "organizations/no-such-org-x/authentication-token")).status).toBe(404);
  });

  it("DELETE revokes it (204)", async () => {
    const { org } = await bootstrapOrg();
    const token = await createOrgToken(org);
    expect((await tfe("DELETE", `organizations/${org}/authentication-token`)).status).toBe(204);
    expect((await tfe("GET", `organizations/${org}`, { token })).status).toBe(401);
    expect((await tfe("DELETE", `organizations/${org}/authentication-token`)).status).toBe(404);
  });
});

describe("authenticateNocode", () => {
  it("ADMIN_TOKEN → admin; missing, malformed or unknown → null", async () => {
    expect(await authenticateNocode(env, bearer(env.ADMIN_TOKEN))).toEqual({ kind: "admin" });
    expect(await authenticateNocode(env, new Headers())).toBeNull();
    expect(await authenticateNocode(env, new Headers({ Authorization: "Basic abc" }))).toBeNull();
    expect(await authenticateNocode(env, bearer("x".repeat(14) + ".atlasv1." + "y".repeat(67)))).toBeNull();
  });

  it("an invalid token is 401 even on unknown paths; a valid one gets 404 there (N2a)", async () => {
    const user = await createUser();
    expect((await tfe("GET", "no/such/path", { token: "bogus" })).status).toBe(401);
    const res = await tfe("GET", "no/such/path", { token: user.token });
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ errors: [{ status: "404", title: "not found" }] });
  });
});
