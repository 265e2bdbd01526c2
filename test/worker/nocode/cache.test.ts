/**
 * The per-isolate cache of /api/v2 (src/nocode/cache.ts): tokens, rights and E3's inputs
 * are served from memory for up to 1 s, but a write in this isolate applies at once.
 * Every case warms the cache first, then writes, then reads again immediately.
 */
import { describe, expect, it } from "vitest";
import {
  addTeamMembers,
  bootstrapOrg,
  createMember,
  createOrgToken,
  createTeam,
  createTeamToken,
  createUser,
  tfe,
} from "../../helpers/nocode";
import { createRegistryModule, enableNoCode, noCodeModuleDoc } from "../../helpers/nocode-modules";

describe("per-isolate cache: this isolate's writes apply immediately", () => {
  it("a revoked team token is refused right after the DELETE", async () => {
    const { org, ownerToken } = await bootstrapOrg();
    const teamId = await createTeam(org);
    const token = await createTeamToken(teamId);
    expect((await tfe("GET", `organizations/${org}`, { token })).status).toBe(200);
    expect((await tfe("DELETE", `teams/${teamId}/authentication-token`, { token: ownerToken })).status).toBe(204);
    expect((await tfe("GET", `organizations/${org}`, { token })).status).toBe(401);
  });

  it("a replaced organization token is refused right after the replacement; the new one works", async () => {
    const { org } = await bootstrapOrg();
    const first = await createOrgToken(org);
    expect((await tfe("GET", `organizations/${org}`, { token: first })).status).toBe(200);
    const second = await createOrgToken(org);
    expect((await tfe("GET", `organizations/${org}`, { token: first })).status).toBe(401);
    expect((await tfe("GET", `organizations/${org}`, { token: second })).status).toBe(200);
  });

  it("a token unknown a moment ago works as soon as it is created", async () => {
    const { org } = await bootstrapOrg();
    const teamId = await createTeam(org);
    const old = await createTeamToken(teamId);
    const fresh = await createTeamToken(teamId); // replaces `old`
    expect((await tfe("GET", `organizations/${org}`, { token: old })).status).toBe(401);
    expect((await tfe("GET", `organizations/${org}`, { token: fresh })).status).toBe(200);
  });

  it("a user removed from its team loses E3 right away", async () => {
    const { org, ownerToken } = await bootstrapOrg();
    const mod = await createRegistryModule(org, ownerToken);
    const enabled = await enableNoCode(org, ownerToken, noCodeModuleDoc(mod.id, {}));
    expect(enabled.status).toBe(200);
    const id = enabled.json.data.id as string;
    const user = await createUser();
    const teamId = await createTeam(org);
    await addTeamMembers(teamId, [user.username]);
    expect((await tfe("GET", `no-code-modules/${id}`, { token: user.token })).status).toBe(200);
    const body = { data: [{ type: "users", id: user.username }] };
    expect((await tfe("DELETE", `teams/${teamId}/relationships/users`, { token: ownerToken, body })).status).toBe(204);
    expect((await tfe("GET", `no-code-modules/${id}`, { token: user.token })).status).toBe(404);
  });

  it("an E2 change is visible to the next E3; DELETE makes the next E3 404", async () => {
    const { org, ownerToken } = await bootstrapOrg();
    const member = await createMember(org);
    const mod = await createRegistryModule(org, ownerToken);
    const enabled = await enableNoCode(org, ownerToken, noCodeModuleDoc(mod.id, { enabled: false }));
    expect(enabled.status).toBe(200);
    const id = enabled.json.data.id as string;
    const before = await tfe("GET", `no-code-modules/${id}`, { token: member.token });
    expect(before.json.data.attributes.enabled).toBe(false);
    const patched = await tfe("PATCH", `no-code-modules/${id}`, {
      token: ownerToken,
      body: { data: { type: "no-code-modules", attributes: { enabled: true } } },
    });
    expect(patched.status).toBe(200);
    const after = await tfe("GET", `no-code-modules/${id}`, { token: member.token });
    expect(after.json.data.attributes.enabled).toBe(true);
    expect(after.json.data.attributes["updated-at"]).toBe(patched.json.data.attributes["updated-at"]);
    expect((await tfe("DELETE", `no-code-modules/${id}`, { token: ownerToken })).status).toBe(204);
    expect((await tfe("GET", `no-code-modules/${id}`, { token: member.token })).status).toBe(404);
  });
});
