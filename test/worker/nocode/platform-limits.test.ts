/**
 * Decision B8: lists of any length stay within D1's 100 bound
 * parameters per statement. Every worker test runs D1 behind the guard that enforces D1's
 * limits (src/db/d1-guard.ts), so each request below failed with 500 before the lists went
 * through `json_each(?)`.
 */
import { describe, expect, it } from "vitest";
import { bootstrapOrg, createTeam, tfe, uniqueName } from "../../helpers/nocode";

/** Create `n` users through ADMIN_TOKEN; returns their usernames. */
async function createUsers(n: number): Promise<string[]> {
  const names = Array.from({ length: n }, () => uniqueName("u"));
  await Promise.all(
    names.map(async (username) => {
      const res = await tfe("POST", "admin/users", {
        body: { data: { type: "users", attributes: { username, email: `${username}@example.test` } } },
      });
      expect(res.status).toBe(201);
    }),
  );
  return names;
}

describe("team membership with many users (B8)", () => {
  it("adds 120 users in one call, lists them, and removes 101 of them in one call", async () => {
    const { org, ownerToken } = await bootstrapOrg();
    const teamId = await createTeam(org);
    const names = await createUsers(120);
    const add = await tfe("POST", `teams/${teamId}/relationships/users`, {
      body: { data: names.map((id) => ({ type: "users", id })) },
    });
    expect(add.status).toBe(204);
    // Idempotent: the same 120 again change nothing.
    expect(
      (
        await tfe("POST", `teams/${teamId}/relationships/users`, {
          body: { data: names.map((id) => ({ type: "users", id })) },
        })
      ).status,
    ).toBe(204);
    const team = await tfe("GET", `teams/${teamId}`, { token: ownerToken });
    expect(team.status).toBe(200);
    expect(team.json.data.attributes["users-count"]).toBe(120);
    expect(team.json.data.relationships.users.data).toHaveLength(120);

    const gone = names.slice(0, 101);
    const remove = await tfe("DELETE", `teams/${teamId}/relationships/users`, {
      body: { data: gone.map((id) => ({ type: "users", id })) },
    });
    expect(remove.status).toBe(204);
    const after = await tfe("GET", `teams/${teamId}`, { token: ownerToken });
    expect(after.json.data.attributes["users-count"]).toBe(19);
  });

  it("names 150 users, one of them unknown, in one call: 404 as for one unknown user, nothing added", async () => {
    const { org, ownerToken } = await bootstrapOrg();
    const teamId = await createTeam(org);
    const names = [...(await createUsers(149)), uniqueName("nobody")];
    const res = await tfe("POST", `teams/${teamId}/relationships/users`, {
      body: { data: names.map((id) => ({ type: "users", id })) },
    });
    expect(res.status).toBe(404);
    expect((await tfe("GET", `teams/${teamId}`, { token: ownerToken })).json.data.attributes["users-count"]).toBe(0);
  });
});

describe("agent pools with many allowed projects (B8)", () => {
  it("creates a pool allowing 110 projects and reads them back", async () => {
    const { org, ownerToken } = await bootstrapOrg();
    const projectIds = await Promise.all(
      Array.from({ length: 110 }, async () => {
        const res = await tfe("POST", `organizations/${org}/projects`, {
          token: ownerToken,
          body: { data: { type: "projects", attributes: { name: uniqueName("p") } } },
        });
        expect(res.status).toBe(201);
        return res.json.data.id as string;
      }),
    );
    const res = await tfe("POST", `organizations/${org}/agent-pools`, {
      token: ownerToken,
      body: {
        data: {
          type: "agent-pools",
          attributes: { name: "many", "organization-scoped": false },
          relationships: { "allowed-projects": { data: projectIds.map((id) => ({ type: "projects", id })) } },
        },
      },
    });
    expect(res.status).toBe(201);
    expect(res.json.data.relationships["allowed-projects"].data).toHaveLength(110);
    // One project of another organization among them is still refused (422).
    const other = await bootstrapOrg();
    const mixed = await tfe("POST", `organizations/${org}/agent-pools`, {
      token: ownerToken,
      body: {
        data: {
          type: "agent-pools",
          attributes: { name: "mixed" },
          relationships: {
            "allowed-projects": {
              data: [...projectIds, other.defaultProjectId].map((id) => ({ type: "projects", id })),
            },
          },
        },
      },
    });
    expect(mixed.status).toBe(422);
  });
});
