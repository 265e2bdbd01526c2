/**
 * Users (N9): `POST /admin/users` with ADMIN_TOKEN only, `GET /account/details`.
 */
import { describe, expect, it } from "vitest";
import {
  bootstrapOrg,
  createOrgToken,
  createTeam,
  createTeamToken,
  createUser,
  tfe,
  uniqueName,
} from "../../../helpers/nocode";

const userBody = (username: unknown, email: unknown = "u@example.test") => ({
  data: { type: "users", attributes: { username, email } },
});

describe("POST /admin/users", () => {
  it("creates a user (201, HCP's users shape, id user-<16 alnum>)", async () => {
    const username = uniqueName("u");
    const res = await tfe("POST", "admin/users", { body: userBody(username, "someone@example.test") });
    expect(res.status).toBe(201);
    expect(res.json.data).toMatchObject({
      type: "users",
      attributes: { username, email: "someone@example.test", "is-service-account": false },
    });
    expect(res.json.data.id).toMatch(/^user-[A-Za-z0-9]{16}$/);
    expect(res.json.data.links.self).toBe(`/api/v2/users/${res.json.data.id}`);
  });

  it("422 Username has already been taken", async () => {
    const { username } = await createUser();
    const res = await tfe("POST", "admin/users", { body: userBody(username) });
    expect(res.status).toBe(422);
    expect(res.json.errors).toEqual([
      {
        status: "422",
        title: "invalid attribute",
        detail: "Username has already been taken",
        source: { pointer: "/data/attributes/username" },
      },
    ]);
  });

  it.each([
    ["no username", { data: { type: "users", attributes: { email: "a@b.c" } } }, "/data/attributes/username"],
    ["bad characters", userBody("a b"), "/data/attributes/username"],
    ["too long", userBody("u".repeat(65)), "/data/attributes/username"],
    ["a number", userBody(7), "/data/attributes/username"],
    ["no email", { data: { type: "users", attributes: { username: uniqueName("u") } } }, "/data/attributes/email"],
    ["bad email", userBody(uniqueName("u"), "nope"), "/data/attributes/email"],
  ])("422 for %s", async (_what, body, pointer) => {
    const res = await tfe("POST", "admin/users", { body });
    expect(res.status).toBe(422);
    expect(res.json.errors[0]).toMatchObject({ title: "invalid attribute", source: { pointer } });
  });

  it("malformed JSON → 400 and nothing is created", async () => {
    const username = uniqueName("u");
    const res = await tfe("POST", "admin/users", {
      rawBody: `{"data":{"attributes":{"username":"${username}","email":"a@b.c"}}`,
    });
    expect(res.status).toBe(400);
    expect((await tfe("POST", "admin/users", { body: userBody(username) })).status).toBe(201);
  });

  it("only ADMIN_TOKEN: user, team and organization tokens get 404 (N9, N10)", async () => {
    const { org, ownerToken, ownersTeamId } = await bootstrapOrg();
    for (const token of [ownerToken, await createTeamToken(ownersTeamId), await createOrgToken(org)]) {
      const res = await tfe("POST", "admin/users", { token, body: userBody(uniqueName("u")) });
      expect(res.status).toBe(404);
    }
  });
});

describe("GET /account/details", () => {
  it("returns the calling user", async () => {
    const user = await createUser();
    const res = await tfe("GET", "account/details", { token: user.token });
    expect(res.status).toBe(200);
    expect(res.json.data).toMatchObject({ id: user.id, type: "users", attributes: { username: user.username } });
  });

  it("404 for callers that are not users", async () => {
    const { org } = await bootstrapOrg();
    const teamToken = await createTeamToken(await createTeam(org));
    for (const token of [undefined, teamToken, await createOrgToken(org)]) {
      expect((await tfe("GET", "account/details", { token })).status).toBe(404);
    }
  });
});
