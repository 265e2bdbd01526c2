/**
 * Organizations (N9, N10): create with ADMIN_TOKEN (owners team and Default Project come
 * with it), read by members only, validation of names and e-mail.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  ADMIN,
  bootstrapOrg,
  createMember,
  createOrgToken,
  createTeamToken,
  createUser,
  tfe,
  uniqueName,
} from "../../../helpers/nocode";

const orgBody = (name: unknown, email: unknown = "ops@example.test") => ({
  data: { type: "organizations", attributes: { name, email } },
});

describe("POST /organizations", () => {
  it("creates the organization with its owners team and Default Project (N9)", async () => {
    const name = uniqueName("org");
    const res = await tfe("POST", "organizations", { body: orgBody(name) });
    expect(res.status).toBe(201);
    expect(res.headers.get("content-type")).toBe("application/vnd.api+json");
    const data = res.json.data;
    expect(data).toMatchObject({
      id: name,
      type: "organizations",
      attributes: { name, email: "ops@example.test" },
      links: { self: `/api/v2/organizations/${name}` },
    });
    expect(data.attributes["created-at"]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const projectId = data.relationships["default-project"].data.id;
    expect(projectId).toMatch(/^prj-[A-Za-z0-9]{16}$/);
    const teamId = data.relationships["owners-team"].data.id;
    expect(teamId).toMatch(/^team-[A-Za-z0-9]{16}$/);

    // An owner sees the owners team and the Default Project.
    const owner = await createUser();
    expect(
      (
        await tfe("POST", `teams/${teamId}/relationships/users`, {
          body: { data: [{ type: "users", id: owner.username }] },
        })
      ).status,
    ).toBe(204);
    const team = await tfe("GET", `teams/${teamId}`, { token: owner.token });
    expect(team.status).toBe(200);
    expect(team.json.data.attributes.name).toBe("owners");
    const project = await tfe("GET", `projects/${projectId}`, { token: owner.token });
    expect(project.status).toBe(200);
    expect(project.json.data.attributes).toMatchObject({ name: "Default Project", "is-default": true });
  });

  it("accepts application/json as well as application/vnd.api+json (N1)", async () => {
    const res = await tfe("POST", "organizations", {
      body: orgBody(uniqueName("org")),
      headers: { "Content-Type": "application/json" },
    });
    expect(res.status).toBe(201);
  });

  it("refuses a duplicate name with 422 Name has already been taken", async () => {
    const { org } = await bootstrapOrg();
    const res = await tfe("POST", "organizations", { body: orgBody(org) });
    expect(res.status).toBe(422);
    expect(res.json).toEqual({
      errors: [
        {
          status: "422",
          title: "invalid attribute",
          detail: "Name has already been taken",
          source: { pointer: "/data/attributes/name" },
        },
      ],
    });
  });

  it("N16: refuses the reserved name settings in any case (the console's /app/settings pages) and creates nothing", async () => {
    for (const name of ["settings", "Settings", "SETTINGS"]) {
      const res = await tfe("POST", "organizations", { body: orgBody(name) });
      expect(res.status, name).toBe(422);
      expect(res.headers.get("content-type")).toBe("application/vnd.api+json");
      expect(res.json).toEqual({
        errors: [
          {
            status: "422",
            title: "invalid attribute",
            detail: "Name is reserved",
            source: { pointer: "/data/attributes/name" },
          },
        ],
      });
    }
    expect(
      await env.DB.prepare("SELECT count(*) AS n FROM organizations WHERE lower(name) = 'settings'").first("n"),
    ).toBe(0);
    // Only the whole name is reserved.
    for (const name of [uniqueName("settings"), `my-settings-${uniqueName("o")}`]) {
      expect((await tfe("POST", "organizations", { body: orgBody(name) })).status, name).toBe(201);
    }
  });

  it.each([
    ["missing name", { data: { type: "organizations", attributes: { email: "a@b.c" } } }, "/data/attributes/name"],
    ["empty name", orgBody(""), "/data/attributes/name"],
    ["name with a space", orgBody("has space"), "/data/attributes/name"],
    ["name with a slash", orgBody("a/b"), "/data/attributes/name"],
    ["name too long", orgBody("x".repeat(65)), "/data/attributes/name"],
    ["name of the wrong type", orgBody(42), "/data/attributes/name"],
    ["bad email", orgBody(uniqueName("org"), "not-an-email"), "/data/attributes/email"],
    ["email of the wrong type", orgBody(uniqueName("org"), true), "/data/attributes/email"],
  ])("422 for %s, pointing at the attribute", async (_what, body, pointer) => {
    const res = await tfe("POST", "organizations", { body });
    expect(res.status).toBe(422);
    expect(res.json.errors[0]).toMatchObject({ status: "422", title: "invalid attribute", source: { pointer } });
  });

  it("reports every invalid attribute at once", async () => {
    const res = await tfe("POST", "organizations", { body: { data: { type: "organizations", attributes: {} } } });
    expect(res.status).toBe(422);
    expect(res.json.errors.map((e: { source: { pointer: string } }) => e.source.pointer)).toEqual([
      "/data/attributes/name",
      "/data/attributes/email",
    ]);
  });

  it("400 for malformed JSON or a non-object body, 422 at /data for a document without data (docs/api-v2-errors.md); nothing is created", async () => {
    const name = uniqueName("org");
    for (const rawBody of [`{"data": {"attributes": {"name": "${name}"`, "[1,2]", '"x"']) {
      const res = await tfe("POST", "organizations", { rawBody });
      expect(res.status).toBe(400);
      expect(res.json.errors[0]).toMatchObject({ status: "400", title: "bad request" });
    }
    for (const body of [{ name, email: "a@b.c" }, { data: null }, { data: [] }, { data: "x" }]) {
      const res = await tfe("POST", "organizations", { body });
      expect(res.status).toBe(422);
      expect(res.json.errors).toEqual([
        {
          status: "422",
          title: "invalid attribute",
          detail: "data must be a JSON:API resource object",
          source: { pointer: "/data" },
        },
      ]);
    }
    const owner = await createUser();
    // Still free: the name can be taken now.
    expect((await tfe("POST", "organizations", { body: orgBody(name) })).status).toBe(201);
    expect(owner.id).toMatch(/^user-/);
  });

  it("422 for a wrong data.type (the one status policy: docs/api-v2-errors.md)", async () => {
    const res = await tfe("POST", "organizations", {
      body: { data: { type: "workspaces", attributes: { name: uniqueName("org"), email: "a@b.c" } } },
    });
    expect(res.status).toBe(422);
    expect(res.json.errors).toEqual([
      {
        status: "422",
        title: "invalid attribute",
        detail: 'data.type must be "organizations"',
        source: { pointer: "/data/type" },
      },
    ]);
  });

  it("413 for a body over 1 MiB (B5), and nothing is created", async () => {
    const name = uniqueName("org");
    const big = JSON.stringify({
      data: { type: "organizations", attributes: { name, email: "a@b.c", pad: "x".repeat(1024 * 1024) } },
    });
    const res = await tfe("POST", "organizations", { rawBody: big });
    expect(res.status).toBe(413);
    expect(res.json.errors[0]).toMatchObject({ status: "413", title: "payload too large" });
    expect((await tfe("POST", "organizations", { body: orgBody(name) })).status).toBe(201);
  });

  it("only ADMIN_TOKEN may create organizations; others get 404 (N9, N10)", async () => {
    const { org, ownerToken } = await bootstrapOrg();
    const teamToken = await createTeamToken(
      (await tfe("POST", `organizations/${org}/teams`, { body: { data: { attributes: { name: uniqueName("t") } } } }))
        .json.data.id,
    );
    const orgToken = await createOrgToken(org);
    for (const token of [ownerToken, teamToken, orgToken]) {
      const res = await tfe("POST", "organizations", { token, body: orgBody(uniqueName("org")) });
      expect(res.status).toBe(404);
      expect(res.json).toEqual({ errors: [{ status: "404", title: "not found" }] });
    }
  });

  it("401 without a token or with a bad one, before anything else (N2a)", async () => {
    for (const token of [
      null,
      "nope",
      "AAAAAAAAAAAAAA.atlasv1.BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB",
    ]) {
      const res = await tfe("POST", "organizations", { token, body: orgBody(uniqueName("org")) });
      expect(res.status).toBe(401);
      expect(res.json).toEqual({ errors: [{ status: "401", title: "unauthorized" }] });
    }
  });
});

describe("GET /organizations/:org", () => {
  it("any member reads it, with permissions describing the caller (N10)", async () => {
    const { org, ownerToken } = await bootstrapOrg();
    const owner = await tfe("GET", `organizations/${org}`, { token: ownerToken });
    expect(owner.status).toBe(200);
    expect(owner.json.data).toMatchObject({ id: org, type: "organizations" });
    expect(owner.json.data.attributes.permissions).toMatchObject({
      "can-update": true,
      "can-create-team": true,
      "can-create-project": true,
    });

    const member = await createMember(org, {});
    const res = await tfe("GET", `organizations/${org}`, { token: member.token });
    expect(res.status).toBe(200);
    expect(res.json.data.attributes.permissions).toMatchObject({
      "can-update": false,
      "can-create-team": false,
      "can-create-project": false,
      "can-access-via-teams": true,
    });
  });

  it("team and organization tokens read their own organization", async () => {
    const { org } = await bootstrapOrg();
    const teamId = (
      await tfe("POST", `organizations/${org}/teams`, { body: { data: { attributes: { name: uniqueName("t") } } } })
    ).json.data.id;
    expect((await tfe("GET", `organizations/${org}`, { token: await createTeamToken(teamId) })).status).toBe(200);
    expect((await tfe("GET", `organizations/${org}`, { token: await createOrgToken(org) })).status).toBe(200);
  });

  it("404 for non-members, other organizations' tokens, ADMIN_TOKEN, and unknown names", async () => {
    const { org } = await bootstrapOrg();
    const other = await bootstrapOrg();
    const stranger = await createUser();
    for (const token of [stranger.token, other.ownerToken, await createOrgToken(other.org), ADMIN]) {
      const res = await tfe("GET", `organizations/${org}`, { token });
      expect(res.status).toBe(404);
      expect(res.json).toEqual({ errors: [{ status: "404", title: "not found" }] });
    }
    expect((await tfe("GET", `organizations/${uniqueName("nope")}`, { token: stranger.token })).status).toBe(404);
  });
});
