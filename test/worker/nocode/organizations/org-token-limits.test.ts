/**
 * Decision N10a: the organization token cannot do through a side
 * door what N10 forbids it — the legacy `no-code: true` create, a token or the membership
 * of a team whose rights it lacks — and it may DELETE a no-code module. ADMIN_TOKEN keeps
 * its bootstrap rights and no other. The whole route table is covered by
 * ./authorization-matrix.test.ts; these are the findings' own requests.
 */
import { describe, expect, it } from "vitest";
import {
  ADMIN,
  bootstrapOrg,
  createOrgToken,
  createTeam,
  createTeamToken,
  createUser,
  type OrganizationAccess,
  tfe,
  uniqueName,
} from "../../../helpers/nocode";
import { createRegistryModule, noCodeModuleDoc, registryModulePath } from "../../../helpers/nocode-modules";

/** The ids of a team's members. */
async function members(teamId: string, token: string): Promise<string[]> {
  const res = await tfe("GET", `teams/${teamId}`, { token });
  return res.json.data.relationships.users.data.map((u: { id: string }) => u.id);
}

describe("N10a: the organization token's side doors are closed", () => {
  it("the legacy no-code: true create is 404 and creates nothing; without it the module is created", async () => {
    const { org, ownerToken } = await bootstrapOrg();
    const token = await createOrgToken(org);
    const name = uniqueName("mod");
    const res = await tfe("POST", `organizations/${org}/registry-modules`, {
      token,
      body: {
        data: {
          type: "registry-modules",
          attributes: { name, provider: "random", "registry-name": "private", "no-code": true },
        },
      },
    });
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ errors: [{ status: "404", title: "not found" }] });
    expect((await tfe("GET", registryModulePath(org, name, "random"), { token: ownerToken })).status).toBe(404);
    const list = await tfe("GET", `organizations/${org}/registry-modules?include=no-code-modules`, {
      token: ownerToken,
    });
    expect(list.json.data).toEqual([]);
    // The same create without the flag is an ordinary registry-module write, which it may do.
    expect((await createRegistryModule(org, token, { name })).name).toBe(name);
    // An owner may still use the legacy flag (E1's right).
    const legacy = await createRegistryModule(org, ownerToken, { noCode: true });
    const read = await tfe("GET", registryModulePath(org, legacy.name, legacy.provider), { token: ownerToken });
    expect(read.json.data.attributes["no-code"]).toBe(true);
  });

  const lacking: [string, OrganizationAccess | "owners"][] = [
    ["owners", "owners"],
    ["a manage-modules team", { "manage-modules": true }],
    ["a manage-workspaces team", { "manage-workspaces": true }],
    ["a manage-modules + read team", { "manage-modules": true, "read-workspaces": true, "manage-projects": true }],
  ];
  for (const [what, access] of lacking) {
    it(`cannot mint, read or revoke the token of ${what}, nor change its membership (404, nothing changes)`, async () => {
      const { org, ownersTeamId, ownerToken, owner } = await bootstrapOrg();
      const token = await createOrgToken(org);
      const teamId = access === "owners" ? ownersTeamId : await createTeam(org, access);
      const existing = await tfe("POST", `teams/${teamId}/authentication-token`, { token: ADMIN });
      expect(existing.status).toBe(201);
      const teamToken = existing.json.data.attributes.token as string;
      const stranger = await createUser();
      const before = await members(teamId, ownerToken);

      expect((await tfe("POST", `teams/${teamId}/authentication-token`, { token })).status).toBe(404);
      expect((await tfe("GET", `authentication-tokens/${existing.json.data.id}`, { token })).status).toBe(404);
      expect((await tfe("DELETE", `authentication-tokens/${existing.json.data.id}`, { token })).status).toBe(404);
      expect((await tfe("DELETE", `teams/${teamId}/authentication-token`, { token })).status).toBe(404);
      const add = await tfe("POST", `teams/${teamId}/relationships/users`, {
        token,
        body: { data: [{ type: "users", id: stranger.username }] },
      });
      expect(add.status).toBe(404);
      const remove = await tfe("DELETE", `teams/${teamId}/relationships/users`, {
        token,
        body: { data: [{ type: "users", id: owner.username }] },
      });
      expect(remove.status).toBe(404);

      // Nothing changed: the team's token still works, its membership is the same.
      expect((await tfe("GET", `organizations/${org}`, { token: teamToken })).status).toBe(200);
      expect(await members(teamId, ownerToken)).toEqual(before);
      // The team reads as one it may not manage.
      const read = await tfe("GET", `teams/${teamId}`, { token });
      expect(read.json.data.attributes.permissions).toMatchObject({
        "can-update-membership": false,
        "can-update-api-token": false,
      });
    });
  }

  it("may still manage a team whose rights it holds (read-workspaces, manage-projects, manage-agent-pools)", async () => {
    const { org, ownerToken } = await bootstrapOrg();
    const token = await createOrgToken(org);
    const teamId = await createTeam(
      org,
      { "read-workspaces": true, "manage-projects": true, "manage-agent-pools": true },
      { token },
    );
    const user = await createUser();
    const minted = await tfe("POST", `teams/${teamId}/authentication-token`, { token });
    expect(minted.status).toBe(201);
    expect((await tfe("GET", `authentication-tokens/${minted.json.data.id}`, { token })).status).toBe(200);
    expect(
      (
        await tfe("POST", `teams/${teamId}/relationships/users`, {
          token,
          body: { data: [{ type: "users", id: user.username }] },
        })
      ).status,
    ).toBe(204);
    expect(await members(teamId, ownerToken)).toEqual([user.id]);
    const read = await tfe("GET", `teams/${teamId}`, { token });
    expect(read.json.data.attributes.permissions).toMatchObject({
      "can-update-membership": true,
      "can-update-api-token": true,
    });
  });

  it("ADMIN_TOKEN keeps its bootstrap: the owners' token and membership", async () => {
    const { ownersTeamId } = await bootstrapOrg();
    const user = await createUser();
    expect((await tfe("POST", `teams/${ownersTeamId}/authentication-token`, { token: ADMIN })).status).toBe(201);
    expect(
      (
        await tfe("POST", `teams/${ownersTeamId}/relationships/users`, {
          token: ADMIN,
          body: { data: [{ type: "users", id: user.username }] },
        })
      ).status,
    ).toBe(204);
  });

  it("an owner still manages every team", async () => {
    const { org, ownerToken } = await bootstrapOrg();
    const teamId = await createTeam(org, { "manage-workspaces": true, "manage-modules": true });
    expect(await createTeamToken(teamId, ownerToken)).toMatch(/\.atlasv1\./);
  });

  it("the organization token's organization shows it may not deploy or manage no-code modules", async () => {
    const { org } = await bootstrapOrg();
    const res = await tfe("GET", `organizations/${org}`, { token: await createOrgToken(org) });
    expect(res.json.data.attributes.permissions).toMatchObject({
      "can-create-module": true,
      "can-manage-no-code-modules": false,
      "can-deploy-no-code-modules": false,
      "can-create-workspace": false,
      "can-create-team": true,
    });
  });

  it("E1 with the organization token stays 404 (unchanged)", async () => {
    const { org, ownerToken } = await bootstrapOrg();
    const mod = await createRegistryModule(org, ownerToken);
    const res = await tfe("POST", `organizations/${org}/no-code-modules`, {
      token: await createOrgToken(org),
      body: noCodeModuleDoc(mod.id),
    });
    expect(res.status).toBe(404);
  });
});
