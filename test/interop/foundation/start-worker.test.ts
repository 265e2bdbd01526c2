import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningKeyway, startKeyway } from "../../support/worker";

describe("the real Worker on 127.0.0.1 (B7)", () => {
  let keyway: RunningKeyway;
  beforeAll(async () => {
    keyway = await startKeyway();
  });
  afterAll(async () => {
    await keyway?.stop();
  });

  it("serves both APIs with their own tokens and formats", async () => {
    const self = await fetch(`${keyway.url}/v1/auth/token/lookup-self`, {
      headers: { "X-Vault-Token": keyway.rootToken },
    });
    expect(self.status).toBe(200);
    expect(((await self.json()) as { data: { display_name: string } }).data.display_name).toBe("root");

    const denied = await fetch(`${keyway.url}/v1/auth/token/lookup-self`, {
      headers: { "X-Vault-Token": keyway.adminToken },
    });
    expect(denied.status).toBe(403);

    const ping = await fetch(`${keyway.url}/api/v2/ping`, {
      headers: { Authorization: `Bearer ${keyway.adminToken}` },
    });
    expect(ping.status).toBe(204);
    const noToken = await fetch(`${keyway.url}/api/v2/nope`);
    expect(noToken.status).toBe(401);
    expect(await noToken.json()).toEqual({ errors: [{ status: "401", title: "unauthorized" }] });
  });

  it("keeps tokens it creates in D1 across requests", async () => {
    const created = await fetch(`${keyway.url}/v1/auth/token/create`, {
      method: "POST",
      headers: { "X-Vault-Token": keyway.rootToken, "Content-Type": "application/json" },
      body: JSON.stringify({ policies: ["default"], display_name: "e2e user" }),
    });
    expect(created.status).toBe(200);
    const token = ((await created.json()) as { auth: { client_token: string } }).auth.client_token;
    const self = await fetch(`${keyway.url}/v1/auth/token/lookup-self`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    expect(((await self.json()) as { data: { display_name: string } }).data.display_name).toBe("token-e2e-user");
  });
});
