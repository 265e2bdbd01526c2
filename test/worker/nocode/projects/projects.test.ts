/**
 * Projects (N9, N10, HCP Terraform's projects API): names of 3–40 letters, digits, spaces, `-`, `_`;
 * created with `manage-projects`; read by any member.
 */
import { describe, expect, it } from "vitest";
import {
  ADMIN,
  bootstrapOrg,
  createMember,
  createOrgToken,
  createTeam,
  createTeamToken,
  createUser,
  tfe,
  uniqueName,
} from "../../../helpers/nocode";

const projectBody = (name: unknown, extra: Record<string, unknown> = {}) => ({
  data: { type: "projects", attributes: { name, ...extra } },
});

describe("POST /organizations/:org/projects", () => {
  it("creates a project (201, id prj-<16 alnum>, HCP's projects shape)", async () => {
    const { org, ownerToken } = await bootstrapOrg();
    const res = await tfe("POST", `organizations/${org}/projects`, {
      token: ownerToken,
      body: projectBody("Team Alpha_1", { description: "first" }),
    });
    expect(res.status).toBe(201);
    const data = res.json.data;
    expect(data.id).toMatch(/^prj-[A-Za-z0-9]{16}$/);
    expect(data).toMatchObject({
      type: "projects",
      attributes: {
        name: "Team Alpha_1",
        description: "first",
        "is-default": false,
        permissions: { "can-update": true },
      },
      relationships: { organization: { data: { id: org, type: "organizations" } } },
      links: { self: `/api/v2/projects/${data.id}` },
    });
    expect(data.attributes["created-at"]).toMatch(/Z$/);
  });

  it("a manage-projects team, owners, and the organization token may create (N10)", async () => {
    const { org, ownerToken, ownersTeamId } = await bootstrapOrg();
    const manager = await createMember(org, { "manage-projects": true });
    const tokens = [
      ownerToken,
      await createTeamToken(ownersTeamId),
      await createOrgToken(org),
      manager.token,
      await createTeamToken(manager.teamId),
    ];
    for (const token of tokens) {
      expect(
        (await tfe("POST", `organizations/${org}/projects`, { token, body: projectBody(uniqueName("p")) })).status,
      ).toBe(201);
    }
  });

  it("a read-workspaces (or read-projects) team token cannot create a project: 404 (N10)", async () => {
    const { org } = await bootstrapOrg();
    const readers = await createTeam(org, {
      "read-workspaces": true,
      "read-projects": true,
      "manage-workspaces": true,
      "manage-modules": true,
    });
    const token = await createTeamToken(readers);
    const res = await tfe("POST", `organizations/${org}/projects`, { token, body: projectBody(uniqueName("p")) });
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ errors: [{ status: "404", title: "not found" }] });
    // It may still read them.
    expect((await tfe("GET", `organizations/${org}/projects`, { token })).status).toBe(200);
  });

  it("ADMIN_TOKEN, non-members and other organizations get 404", async () => {
    const { org } = await bootstrapOrg();
    const other = await bootstrapOrg();
    for (const token of [ADMIN, (await createUser()).token, other.ownerToken, await createOrgToken(other.org)]) {
      expect(
        (await tfe("POST", `organizations/${org}/projects`, { token, body: projectBody(uniqueName("p")) })).status,
      ).toBe(404);
    }
  });

  it("422 Name has already been taken (per organization)", async () => {
    const { org, ownerToken } = await bootstrapOrg();
    const res = await tfe("POST", `organizations/${org}/projects`, {
      token: ownerToken,
      body: projectBody("Default Project"),
    });
    expect(res.status).toBe(422);
    expect(res.json.errors[0]).toEqual({
      status: "422",
      title: "invalid attribute",
      detail: "Name has already been taken",
      source: { pointer: "/data/attributes/name" },
    });
    const other = await bootstrapOrg();
    expect(
      (
        await tfe("POST", `organizations/${other.org}/projects`, {
          token: other.ownerToken,
          body: projectBody("shared name"),
        })
      ).status,
    ).toBe(201);
    expect(
      (await tfe("POST", `organizations/${org}/projects`, { token: ownerToken, body: projectBody("shared name") }))
        .status,
    ).toBe(201);
  });

  it.each([
    ["too short", "ab", "Name is too short (minimum is 3 characters)"],
    ["too long", "p".repeat(41), "Name is too long (maximum is 40 characters)"],
    ["a leading space", " abc", "Name may only contain"],
    ["a trailing space", "abc ", "Name may only contain"],
    ["a dot", "a.bc", "Name may only contain"],
    ["a slash", "a/bc", "Name may only contain"],
    ["blank", "", "Name can't be blank"],
  ])("422 for a name with %s, and nothing is created", async (_what, name, detail) => {
    const { org, ownerToken } = await bootstrapOrg();
    const res = await tfe("POST", `organizations/${org}/projects`, { token: ownerToken, body: projectBody(name) });
    expect(res.status).toBe(422);
    expect(res.json.errors[0].detail).toContain(detail);
    expect(res.json.errors[0].source.pointer).toBe("/data/attributes/name");
    const list = await tfe("GET", `organizations/${org}/projects`, { token: ownerToken });
    expect(list.json.meta.pagination["total-count"]).toBe(1);
  });

  it("accepts exactly 3 and 40 characters; 422 for wrong types and a long description", async () => {
    const { org, ownerToken } = await bootstrapOrg();
    const post = (body: unknown) => tfe("POST", `organizations/${org}/projects`, { token: ownerToken, body });
    expect((await post(projectBody("abc"))).status).toBe(201);
    expect((await post(projectBody("p".repeat(40)))).status).toBe(201);
    const numeric = await post(projectBody(123));
    expect(numeric.status).toBe(422);
    const desc = await post(projectBody("with desc", { description: "d".repeat(257) }));
    expect(desc.status).toBe(422);
    expect(desc.json.errors[0].source.pointer).toBe("/data/attributes/description");
    const both = await post(projectBody("x", { description: 5 }));
    expect(both.json.errors).toHaveLength(2);
  });

  it("400 malformed JSON, 422 wrong type (docs/api-v2-errors.md), 413 over 1 MiB; nothing is created", async () => {
    const { org, ownerToken } = await bootstrapOrg();
    const path = `organizations/${org}/projects`;
    expect((await tfe("POST", path, { token: ownerToken, rawBody: "{" })).status).toBe(400);
    expect(
      (
        await tfe("POST", path, {
          token: ownerToken,
          body: { data: { type: "workspaces", attributes: { name: "abc" } } },
        })
      ).status,
    ).toBe(422);
    const big = JSON.stringify(projectBody("big one", { pad: "x".repeat(1024 * 1024) }));
    expect((await tfe("POST", path, { token: ownerToken, rawBody: big })).status).toBe(413);
    expect((await tfe("GET", path, { token: ownerToken })).json.meta.pagination["total-count"]).toBe(1);
  });

  it("accepts the `project` synonym of the type (N1)", async () => {
    const { org, ownerToken } = await bootstrapOrg();
    const res = await tfe("POST", `organizations/${org}/projects`, {
      token: ownerToken,
      body: { data: { type: "project", attributes: { name: "synonym" } } },
    });
    expect(res.status).toBe(201);
    expect(res.json.data.type).toBe("projects");
  });
});

describe("reading projects", () => {
  it("any member lists (paged, searchable with q) and reads them", async () => {
    const { org, ownerToken, defaultProjectId } = await bootstrapOrg();
    const created = await tfe("POST", `organizations/${org}/projects`, {
      token: ownerToken,
      body: projectBody("blue sky"),
    });
    const member = await createMember(org, {});
    const list = await tfe("GET", `organizations/${org}/projects`, { token: member.token });
    expect(list.status).toBe(200);
    expect(list.json.data.map((p: { attributes: { name: string } }) => p.attributes.name)).toEqual([
      "Default Project",
      "blue sky",
    ]);
    expect(list.json.data[0]).toMatchObject({
      id: defaultProjectId,
      attributes: { "is-default": true, permissions: { "can-update": false } },
    });
    const found = await tfe("GET", `organizations/${org}/projects?q=sky`, { token: member.token });
    expect(found.json.data.map((p: { id: string }) => p.id)).toEqual([created.json.data.id]);
    const one = await tfe("GET", `projects/${created.json.data.id}`, { token: member.token });
    expect(one.status).toBe(200);
    expect(one.json.data.attributes.name).toBe("blue sky");
  });

  it("non-members, other organizations and ADMIN_TOKEN get 404", async () => {
    const { org, defaultProjectId } = await bootstrapOrg();
    const other = await bootstrapOrg();
    for (const token of [ADMIN, (await createUser()).token, other.ownerToken, await createOrgToken(other.org)]) {
      expect((await tfe("GET", `organizations/${org}/projects`, { token })).status).toBe(404);
      expect((await tfe("GET", `projects/${defaultProjectId}`, { token })).status).toBe(404);
    }
    expect((await tfe("GET", "projects/prj-AAAAAAAAAAAAAAAA", { token: other.ownerToken })).status).toBe(404);
  });
});
