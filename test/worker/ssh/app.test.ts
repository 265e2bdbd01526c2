import { describe, expect, it } from "vitest";
import { vault } from "../../helpers/vault";

describe("secrets API order of checks (S2a)", () => {
  it("answers an unknown path without a token with 403 permission denied", async () => {
    const res = await vault("GET", "ssh/nope", { token: null });
    expect(res.status).toBe(403);
    expect(res.json).toEqual({ errors: ["permission denied"] });
  });

  it("answers an unknown path with a valid token with 404 unsupported path", async () => {
    const res = await vault("GET", "ssh/nope");
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ errors: ["unsupported path"] });
  });

  it("answers an unknown mount with 404 after auth", async () => {
    expect((await vault("GET", "nomount/roles/x")).status).toBe(404);
    expect((await vault("GET", "nomount/roles/x", { token: null })).status).toBe(403);
  });
});

describe("methods (S2)", () => {
  it("answers methods a path does not support with 405 after auth", async () => {
    expect((await vault("DELETE", "auth/token/lookup-self")).status).toBe(405);
    expect((await vault("DELETE", "auth/token/lookup-self")).json).toEqual({ errors: ["unsupported operation"] });
    expect((await vault("DELETE", "auth/token/lookup-self", { token: null })).status).toBe(403);
    expect((await vault("OPTIONS", "auth/token/lookup-self")).status).toBe(405);
  });

  it("treats PUT like POST", async () => {
    const res = await vault("PUT", "auth/token/create", { body: { policies: ["default"] } });
    expect(res.status).toBe(200);
  });
});
