import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tfe, vault } from "../../support/client";
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
    const self = await vault(keyway, "GET", "auth/token/lookup-self");
    expect(self.status).toBe(200);
    expect(self.json.data.display_name).toBe("root");

    const denied = await vault(keyway, "GET", "auth/token/lookup-self", undefined, keyway.adminToken);
    expect(denied.status).toBe(403);

    const ping = await tfe(keyway, "GET", "ping", keyway.adminToken);
    expect(ping.status).toBe(204);
    const noToken = await tfe(keyway, "GET", "nope", null);
    expect(noToken.status).toBe(401);
    expect(noToken.json).toEqual({ errors: [{ status: "401", title: "unauthorized" }] });
  });

  it("keeps tokens it creates in D1 across requests", async () => {
    const created = await vault(keyway, "POST", "auth/token/create", {
      policies: ["default"],
      display_name: "e2e user",
    });
    expect(created.status).toBe(200);
    const token = created.json.auth.client_token as string;
    // A bearer token is accepted on /v1 as Vault accepts it.
    const self = await fetch(`${keyway.url}/v1/auth/token/lookup-self`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    expect(((await self.json()) as { data: { display_name: string } }).data.display_name).toBe("token-e2e-user");
  });
});
