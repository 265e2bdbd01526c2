/**
 * Teams and membership (N9, N10): created by ADMIN_TOKEN, owners or the organization
 * token; read by any member; `organization-access` flags; membership by username.
 */
import { describe, expect, it } from "vitest";
import {
  ADMIN,
  addTeamMembers,
  bootstrapOrg,
  createMember,
  createOrgToken,
  createTeam,
  createTeamToken,
  createUser,
  tfe,
  uniqueName,
} from "../../../helpers/nocode";

const teamBody = (name: unknown, access?: unknown) => ({
  data: { type: "teams", attributes: { name, ...(access === undefined ? {} : { "organization-access": access }) } },
});

describe("POST /organizations/:org/teams", () => {
  it("creates a team with its organization access (201, HCP's teams shape)", async () => {
    const { org } = await bootstrapOrg();
    const name = uniqueName("t");
    const res = await tfe("POST", `organizations/${org}/teams`, {
      body: teamBody(name, { "manage-projects": true, "read-workspaces": true, "manage-policies": true }),
    });
    expect(res.status).toBe(201);
    expect(res.json.data.id).toMatch(/^team-[A-Za-z0-9]{16}$/);
    expect(res.json.data).toMatchObject({
      type: "teams",
      attributes: {
        name,
        "users-count": 0,
        "organization-access": {
          "manage-workspaces": false,
          "manage-projects": true,
          "manage-modules": false,
          "manage-agent-pools": false,
          "read-workspaces": true,
          "read-projects": false,
        },
      },
      relationships: { organization: { data: { id: org, type: "organizations" } }, users: { data: [] } },
      links: { self: `/api/v2/teams/${res.json.data.id}` },
    });
  });

  it("ADMIN_TOKEN, an owner, the owners team token and the organization token may create teams (N9)", async () => {
    const { org, ownerToken, ownersTeamId } = await bootstrapOrg();
    for (const token of [ADMIN, ownerToken, await createTeamToken(ownersTeamId), await createOrgToken(org)]) {
      expect((await tfe("POST", `organizations/${org}/teams`, { token, body: teamBody(uniqueName("t")) })).status).toBe(
        201,
      );
    }
  });

  it("members without owner rights, other organizations and non-members get 404 (N10)", async () => {
    const { org } = await bootstrapOrg();
    const member = await createMember(org, {
      "manage-workspaces": true,
      "manage-projects": true,
      "manage-modules": true,
      "manage-agent-pools": true,
    });
    const other = await bootstrapOrg();
    const stranger = await createUser();
    for (const token of [
      member.token,
      await createTeamToken(member.teamId),
      other.ownerToken,
      await createOrgToken(other.org),
      stranger.token,
    ]) {
      expect((await tfe("POST", `organizations/${org}/teams`, { token, body: teamBody(uniqueName("t")) })).status).toBe(
        404,
      );
    }
    expect((await tfe("POST", `organizations/${uniqueName("none")}/teams`, { body: teamBody("x") })).status).toBe(404);
  });

  it("422 Name has already been taken, also for `owners`", async () => {
    const { org } = await bootstrapOrg();
    const name = uniqueName("t");
    await createTeam(org, {}, { name });
    for (const taken of [name, "owners"]) {
      const res = await tfe("POST", `organizations/${org}/teams`, { body: teamBody(taken) });
      expect(res.status).toBe(422);
      expect(res.json.errors[0]).toEqual({
        status: "422",
        title: "invalid attribute",
        detail: "Name has already been taken",
        source: { pointer: "/data/attributes/name" },
      });
    }
    // The same name in another organization is fine.
    const other = await bootstrapOrg();
    expect((await tfe("POST", `organizations/${other.org}/teams`, { body: teamBody(name) })).status).toBe(201);
  });

  it.each([
    ["no name", { data: { type: "teams", attributes: {} } }, "/data/attributes/name"],
    ["a bad name", teamBody("a team"), "/data/attributes/name"],
    ["a long name", teamBody("t".repeat(65)), "/data/attributes/name"],
    ["a numeric name", teamBody(1), "/data/attributes/name"],
    ["organization-access not an object", teamBody("ok-name", "all"), "/data/attributes/organization-access"],
    [
      "a non-boolean flag",
      teamBody("ok-name", { "manage-projects": "yes" }),
      "/data/attributes/organization-access/manage-projects",
    ],
  ])("422 for %s, and nothing is created", async (_what, body, pointer) => {
    const { org, ownerToken } = await bootstrapOrg();
    const res = await tfe("POST", `organizations/${org}/teams`, { body });
    expect(res.status).toBe(422);
    expect(res.json.errors[0]).toMatchObject({ status: "422", title: "invalid attribute", source: { pointer } });
    const list = await tfe("GET", `organizations/${org}/teams`, { token: ownerToken });
    expect(list.json.data.map((t: { attributes: { name: string } }) => t.attributes.name)).toEqual(["owners"]);
  });

  it("400 for malformed JSON and 413 over 1 MiB (B5); nothing is created", async () => {
    const { org, ownerToken } = await bootstrapOrg();
    expect((await tfe("POST", `organizations/${org}/teams`, { rawBody: '{"data":' })).status).toBe(400);
    const big = JSON.stringify({ data: { attributes: { name: "big", pad: "x".repeat(1024 * 1024 + 1) } } });
    expect((await tfe("POST", `organizations/${org}/teams`, { rawBody: big })).status).toBe(413);
    const list = await tfe("GET", `organizations/${org}/teams`, { token: ownerToken });
    expect(list.json.meta.pagination["total-count"]).toBe(1);
  });
});

describe("reading teams", () => {
  it("any member lists and reads teams; pagination per HCP Terraform's pagination", async () => {
    const { org, ownersTeamId } = await bootstrapOrg();
    for (let i = 0; i < 3; i++) await createTeam(org, {}, { name: `team-${i}` });
    const member = await createMember(org, {});
    const page = await tfe("GET", `organizations/${org}/teams?page[size]=2&page[number]=2`, { token: member.token });
    expect(page.status).toBe(200);
    expect(page.json.meta.pagination).toEqual({
      "current-page": 2,
      "page-size": 2,
      "prev-page": 1,
      "next-page": 3,
      "total-pages": 3,
      "total-count": 5,
    });
    expect(page.json.links.next).toContain("page%5Bnumber%5D=3");
    const all = await tfe("GET", `organizations/${org}/teams?page[size]=100`, { token: member.token });
    expect(all.json.data).toHaveLength(5);
    const owners = await tfe("GET", `teams/${ownersTeamId}`, { token: member.token });
    expect(owners.status).toBe(200);
    expect(owners.json.data.attributes["organization-access"]).toEqual({
      "manage-workspaces": true,
      "manage-projects": true,
      "manage-modules": true,
      "manage-agent-pools": true,
      "read-workspaces": true,
      "read-projects": true,
    });
    expect(owners.json.data.attributes.permissions["can-update-membership"]).toBe(false);
  });

  it("a bad page parameter is 400", async () => {
    const { org, ownerToken } = await bootstrapOrg();
    expect((await tfe("GET", `organizations/${org}/teams?page[size]=abc`, { token: ownerToken })).status).toBe(400);
    expect((await tfe("GET", `organizations/${org}/teams?page[number]=0`, { token: ownerToken })).status).toBe(400);
  });

  it("non-members, other organizations' tokens and ADMIN_TOKEN get 404 (N10)", async () => {
    const { org, ownersTeamId } = await bootstrapOrg();
    const other = await bootstrapOrg();
    const stranger = await createUser();
    for (const token of [stranger.token, other.ownerToken, await createOrgToken(other.org), ADMIN]) {
      expect((await tfe("GET", `organizations/${org}/teams`, { token })).status).toBe(404);
      expect((await tfe("GET", `teams/${ownersTeamId}`, { token })).status).toBe(404);
    }
    expect((await tfe("GET", "teams/team-AAAAAAAAAAAAAAAA", { token: stranger.token })).status).toBe(404);
  });
});

describe("team membership", () => {
  it("POST adds users by username (204), idempotently; DELETE removes them (204)", async () => {
    const { org, ownerToken } = await bootstrapOrg();
    const teamId = await createTeam(org);
    const a = await createUser();
    const b = await createUser();
    const add = await tfe("POST", `teams/${teamId}/relationships/users`, {
      token: ownerToken,
      body: {
        data: [
          { type: "users", id: a.username },
          { type: "users", id: b.username },
        ],
      },
    });
    expect(add.status).toBe(204);
    expect(add.text).toBe("");
    await addTeamMembers(teamId, [a.username]);
    let team = await tfe("GET", `teams/${teamId}`, { token: a.token });
    expect(team.json.data.attributes["users-count"]).toBe(2);
    expect(team.json.data.relationships.users.data).toEqual(
      expect.arrayContaining([
        { id: a.id, type: "users" },
        { id: b.id, type: "users" },
      ]),
    );

    const del = await tfe("DELETE", `teams/${teamId}/relationships/users`, {
      token: ownerToken,
      body: { data: [{ type: "users", id: b.username }] },
    });
    expect(del.status).toBe(204);
    team = await tfe("GET", `teams/${teamId}`, { token: a.token });
    expect(team.json.data.relationships.users.data).toEqual([{ id: a.id, type: "users" }]);
    // b is no longer a member of any team: the organization is gone for it.
    expect((await tfe("GET", `organizations/${org}`, { token: b.token })).status).toBe(404);
  });

  it("an unknown user is 404 and nobody is added", async () => {
    const { org, ownerToken } = await bootstrapOrg();
    const teamId = await createTeam(org);
    const a = await createUser();
    const res = await tfe("POST", `teams/${teamId}/relationships/users`, {
      token: ownerToken,
      body: {
        data: [
          { type: "users", id: a.username },
          { type: "users", id: uniqueName("ghost") },
        ],
      },
    });
    expect(res.status).toBe(404);
    expect((await tfe("GET", `teams/${teamId}`, { token: ownerToken })).json.data.attributes["users-count"]).toBe(0);
  });

  it("malformed documents are 422 with the member's pointer, a body that is not JSON 400 (docs/api-v2-errors.md)", async () => {
    const { org } = await bootstrapOrg();
    const teamId = await createTeam(org);
    const path = `teams/${teamId}/relationships/users`;
    const pointerOf = async (body: unknown) => {
      const res = await tfe("POST", path, { body });
      expect(res.status).toBe(422);
      return res.json.errors[0].source.pointer;
    };
    expect(await pointerOf({ data: { type: "users", id: "x" } })).toBe("/data");
    expect(await pointerOf({ data: ["x"] })).toBe("/data/0");
    expect(await pointerOf({ data: [{ type: "users", id: 3 }] })).toBe("/data/0/id");
    expect(await pointerOf({ data: [{ type: "teams", id: "x" }] })).toBe("/data/0/type");
    expect((await tfe("POST", path, { rawBody: "[" })).status).toBe(400);
  });

  it("ADMIN_TOKEN, owners and the organization token manage membership; other callers get 404", async () => {
    const { org, ownerToken } = await bootstrapOrg();
    const teamId = await createTeam(org);
    const user = await createUser();
    const body = { data: [{ type: "users", id: user.username }] };
    for (const token of [ADMIN, ownerToken, await createOrgToken(org)]) {
      expect((await tfe("POST", `teams/${teamId}/relationships/users`, { token, body })).status).toBe(204);
    }
    const member = await createMember(org, { "manage-workspaces": true });
    const other = await bootstrapOrg();
    for (const token of [member.token, user.token, await createTeamToken(teamId), other.ownerToken]) {
      expect((await tfe("POST", `teams/${teamId}/relationships/users`, { token, body })).status).toBe(404);
      expect((await tfe("DELETE", `teams/${teamId}/relationships/users`, { token, body })).status).toBe(404);
    }
  });
});
