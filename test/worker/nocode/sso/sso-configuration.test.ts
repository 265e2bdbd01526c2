/**
 * `GET|PATCH /organizations/:org/sso-configuration` (decision N16): owners only, the client
 * secret write-only and encrypted under KEYWAY_KEK (B2), `redirect-uri` read-only,
 * discovery read when enabled, the attribute rules, and the generation.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { decryptSecret } from "../../../../src/lib/crypto/kek";
import { fixtureBase, serveProvider } from "../../../helpers/jwt-auth";
import {
  bootstrapOrg,
  createMember,
  createOrgToken,
  createTeam,
  createTeamToken,
  tfe,
  uniqueName,
} from "../../../helpers/nocode";

const patch = (org: string, token: string, attributes: Record<string, unknown>) =>
  tfe("PATCH", `organizations/${org}/sso-configuration`, {
    token,
    body: { data: { type: "sso-configurations", attributes } },
  });

async function stored(org: string) {
  return env.DB.prepare("SELECT * FROM sso_configurations WHERE organization = ?")
    .bind(org)
    .first<{ client_secret_encrypted: string | null; generation: number; enabled: number }>();
}

describe("sso-configuration (N16)", () => {
  it("answers the defaults, then stores an enabled configuration without ever showing the secret", async () => {
    const { org, ownerToken } = await bootstrapOrg();
    const first = await tfe("GET", `organizations/${org}/sso-configuration`, { token: ownerToken });
    expect(first.status).toBe(200);
    expect(first.json.data.type).toBe("sso-configurations");
    expect(first.json.data.attributes).toEqual({
      enabled: false,
      issuer: null,
      "client-id": null,
      "groups-claim": null,
      "auto-provision": false,
      "default-team": null,
      "team-sync": false,
      "redirect-uri": `http://keyway.test/app/~/sso/${org}/callback`,
    });
    const issuer = await serveProvider();
    const team = uniqueName("devs");
    await createTeam(org, {}, { name: team });
    const res = await patch(org, ownerToken, {
      enabled: true,
      issuer,
      "client-id": "keyway",
      "client-secret": "very-secret",
      "groups-claim": "groups",
      "auto-provision": true,
      "default-team": team,
      "team-sync": true,
      "redirect-uri": "https://evil.example/ignored",
    });
    expect(res.status, res.text).toBe(200);
    expect(res.text).not.toContain("very-secret");
    expect(res.json.data.attributes).toMatchObject({
      enabled: true,
      issuer,
      "client-id": "keyway",
      "default-team": team,
      "redirect-uri": `http://keyway.test/app/~/sso/${org}/callback`,
    });
    expect(res.json.data.attributes["client-secret"]).toBeUndefined();
    const row = await stored(org);
    expect(row?.client_secret_encrypted).toMatch(/^v1\./);
    expect(await decryptSecret(env.KEYWAY_KEK, `sso-client-secret:${org}`, row!.client_secret_encrypted!)).toBe(
      "very-secret",
    );
    const again = await tfe("GET", `organizations/${org}/sso-configuration`, { token: ownerToken });
    expect(again.text).not.toContain("very-secret");
  });

  it("is for owners only: a member, a non-owner team token and the organization token get 404", async () => {
    const { org } = await bootstrapOrg();
    const member = await createMember(org, { "manage-workspaces": true });
    const teamToken = await createTeamToken(member.teamId);
    const orgToken = await createOrgToken(org);
    for (const token of [member.token, teamToken, orgToken]) {
      expect((await tfe("GET", `organizations/${org}/sso-configuration`, { token })).status).toBe(404);
      expect((await patch(org, token, { "auto-provision": false })).status).toBe(404);
    }
    expect(await stored(org)).toBeNull();
  });

  it("lets the owners team's token read and change it", async () => {
    const { org, ownersTeamId } = await bootstrapOrg();
    const token = await createTeamToken(ownersTeamId);
    expect((await patch(org, token, { "groups-claim": "groups" })).status).toBe(200);
    expect(
      (await tfe("GET", `organizations/${org}/sso-configuration`, { token })).json.data.attributes["groups-claim"],
    ).toBe("groups");
  });

  it("refuses broken rules with 422 and stores nothing", async () => {
    const { org, ownerToken } = await bootstrapOrg();
    const cases: [Record<string, unknown>, string][] = [
      [{ enabled: true }, "Issuer is required when SSO is enabled"],
      [{ enabled: true, issuer: "https://127.0.0.1:1", "client-id": "x" }, "Client secret is required"],
      [{ issuer: "http://idp.example.com" }, "must use https://"],
      [{ "auto-provision": true }, "Default team is required when auto-provision is true"],
      [{ "default-team": "owners" }, "Default team cannot be the owners team"],
      [{ "default-team": "nope" }, "Default team must be a team of the organization"],
      [{ "team-sync": true }, "Groups claim is required when team-sync is true"],
      [{ enabled: "yes" }, "Enabled must be true or false"],
      [
        { enabled: true, issuer: `${fixtureBase()}/${uniqueName("missing")}`, "client-id": "x", "client-secret": "y" },
        "the discovery document could not be read",
      ],
    ];
    for (const [attributes, message] of cases) {
      const res = await patch(org, ownerToken, attributes);
      expect(res.status, `${JSON.stringify(attributes)}: ${res.text}`).toBe(422);
      expect(res.text).toContain(message);
    }
    expect(await stored(org)).toBeNull();
  });

  it("bumps the generation when the issuer, the client id or enabled changes, not otherwise", async () => {
    const { org, ownerToken } = await bootstrapOrg();
    const issuer = await serveProvider();
    await patch(org, ownerToken, { enabled: true, issuer, "client-id": "a", "client-secret": "s" });
    const g1 = (await stored(org))!.generation;
    await patch(org, ownerToken, { "groups-claim": "groups", "client-secret": "t" });
    expect((await stored(org))!.generation).toBe(g1);
    await patch(org, ownerToken, { "client-id": "b" });
    expect((await stored(org))!.generation).toBe(g1 + 1);
    await patch(org, ownerToken, { issuer: await serveProvider() });
    expect((await stored(org))!.generation).toBe(g1 + 2);
    await patch(org, ownerToken, { enabled: false });
    expect((await stored(org))!.generation).toBe(g1 + 3);
  });
});
