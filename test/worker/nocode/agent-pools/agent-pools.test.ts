/**
 * Agent pools (N9, N10, HCP Terraform's agent pools API): created with `manage-agent-pools`, read by any
 * member; `organization-scoped` defaults to true.
 */
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

const poolBody = (attributes: Record<string, unknown>, relationships?: Record<string, unknown>) => ({
  data: { type: "agent-pools", attributes, ...(relationships ? { relationships } : {}) },
});

describe("POST /organizations/:org/agent-pools", () => {
  it("creates an organization-scoped pool by default (201, apool-<16 alnum>)", async () => {
    const { org, ownerToken } = await bootstrapOrg();
    const res = await tfe("POST", `organizations/${org}/agent-pools`, {
      token: ownerToken,
      body: poolBody({ name: "pool-1" }),
    });
    expect(res.status).toBe(201);
    expect(res.json.data.id).toMatch(/^apool-[A-Za-z0-9]{16}$/);
    expect(res.json.data).toMatchObject({
      type: "agent-pools",
      attributes: { name: "pool-1", "organization-scoped": true, "agent-count": 0 },
      relationships: {
        organization: { data: { id: org, type: "organizations" } },
        "allowed-workspaces": { data: [] },
        "allowed-projects": { data: [] },
        "excluded-workspaces": { data: [] },
      },
      links: { self: `/api/v2/agent-pools/${res.json.data.id}` },
    });
  });

  it("stores organization-scoped false and the allowed projects and workspaces", async () => {
    const { org, ownerToken, defaultProjectId } = await bootstrapOrg();
    const res = await tfe("POST", `organizations/${org}/agent-pools`, {
      token: ownerToken,
      body: poolBody(
        { name: "scoped", "organization-scoped": false },
        {
          "allowed-projects": { data: [{ type: "projects", id: defaultProjectId }] },
          "allowed-workspaces": { data: [{ type: "workspaces", id: "ws-AAAAAAAAAAAAAAAA" }] },
        },
      ),
    });
    expect(res.status).toBe(201);
    const read = await tfe("GET", `agent-pools/${res.json.data.id}`, { token: ownerToken });
    expect(read.json.data.attributes["organization-scoped"]).toBe(false);
    expect(read.json.data.relationships["allowed-projects"].data).toEqual([{ id: defaultProjectId, type: "projects" }]);
    expect(read.json.data.relationships["allowed-workspaces"].data).toEqual([
      { id: "ws-AAAAAAAAAAAAAAAA", type: "workspaces" },
    ]);
  });

  it("a manage-agent-pools team, owners and the organization token may create; others 404 (N10)", async () => {
    const { org, ownerToken } = await bootstrapOrg();
    const manager = await createMember(org, { "manage-agent-pools": true });
    for (const token of [ownerToken, await createOrgToken(org), manager.token, await createTeamToken(manager.teamId)]) {
      expect(
        (await tfe("POST", `organizations/${org}/agent-pools`, { token, body: poolBody({ name: uniqueName("p") }) }))
          .status,
      ).toBe(201);
    }
    const projects = await createMember(org, { "manage-projects": true, "manage-workspaces": true });
    const other = await bootstrapOrg();
    for (const token of [
      ADMIN,
      projects.token,
      (await createUser()).token,
      other.ownerToken,
      await createOrgToken(other.org),
    ]) {
      expect(
        (await tfe("POST", `organizations/${org}/agent-pools`, { token, body: poolBody({ name: uniqueName("p") }) }))
          .status,
      ).toBe(404);
    }
  });

  it("422 for duplicate, bad or missing names, a non-boolean scope, and bad relationships; nothing is created", async () => {
    const { org, ownerToken } = await bootstrapOrg();
    const other = await bootstrapOrg();
    const post = (body: unknown) => tfe("POST", `organizations/${org}/agent-pools`, { token: ownerToken, body });
    expect((await post(poolBody({ name: "dup" }))).status).toBe(201);
    const dup = await post(poolBody({ name: "dup" }));
    expect(dup.status).toBe(422);
    expect(dup.json.errors[0]).toMatchObject({
      detail: "Name has already been taken",
      source: { pointer: "/data/attributes/name" },
    });
    const cases: [unknown, string][] = [
      [poolBody({}), "/data/attributes/name"],
      [poolBody({ name: "has space" }), "/data/attributes/name"],
      [poolBody({ name: "n".repeat(91) }), "/data/attributes/name"],
      [poolBody({ name: "ok", "organization-scoped": "true" }), "/data/attributes/organization-scoped"],
      [
        poolBody({ name: "ok" }, { "allowed-projects": { data: [{ type: "projects", id: other.defaultProjectId }] } }),
        "/data/relationships/allowed-projects",
      ],
      [poolBody({ name: "ok" }, { "allowed-projects": [] }), "/data/relationships/allowed-projects"],
      [
        poolBody({ name: "ok" }, { "allowed-workspaces": { data: [{ type: "workspaces", id: "not-an-id" }] } }),
        "/data/relationships/allowed-workspaces/data/0/id",
      ],
    ];
    for (const [body, pointer] of cases) {
      const res = await post(body);
      expect(res.status).toBe(422);
      expect(res.json.errors[0].source.pointer).toBe(pointer);
    }
    // The one status policy (docs/api-v2-errors.md): a JSON object that is not the document is 422 at /data.
    expect((await post({ data: "x" })).status).toBe(422);
    expect((await post({ data: "x" })).json.errors[0].source).toEqual({ pointer: "/data" });
    expect((await tfe("POST", `organizations/${org}/agent-pools`, { token: ownerToken, rawBody: "{]" })).status).toBe(
      400,
    );
    const list = await tfe("GET", `organizations/${org}/agent-pools`, { token: ownerToken });
    expect(list.json.data.map((p: { attributes: { name: string } }) => p.attributes.name)).toEqual(["dup"]);
  });
});

describe("reading agent pools", () => {
  it("any member lists and reads; others get 404", async () => {
    const { org, ownerToken } = await bootstrapOrg();
    const created = await tfe("POST", `organizations/${org}/agent-pools`, {
      token: ownerToken,
      body: poolBody({ name: "readable" }),
    });
    const member = await createMember(org, {});
    const list = await tfe("GET", `organizations/${org}/agent-pools`, { token: member.token });
    expect(list.status).toBe(200);
    expect(list.json.data).toHaveLength(1);
    expect(list.json.meta.pagination["total-count"]).toBe(1);
    expect((await tfe("GET", `agent-pools/${created.json.data.id}`, { token: member.token })).status).toBe(200);

    const other = await bootstrapOrg();
    for (const token of [ADMIN, (await createUser()).token, other.ownerToken]) {
      expect((await tfe("GET", `organizations/${org}/agent-pools`, { token })).status).toBe(404);
      expect((await tfe("GET", `agent-pools/${created.json.data.id}`, { token })).status).toBe(404);
    }
  });
});
