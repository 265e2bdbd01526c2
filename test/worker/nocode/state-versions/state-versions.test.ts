/**
 * State versions and outputs through HCP Terraform's API (decision N20), after an agent run
 * applied a state with outputs: the answers' shapes, N20's rights for every token kind
 * (owner user, manage-workspaces team token and user, read-workspaces team, organization
 * token, another organization), the signed state download (B23: expired, tampered, other
 * purpose → 404; no-store, no-referrer) and the md5 of the downloaded state.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { signLink } from "../../../../src/lib/crypto/signed-link";
import { agentPoolOrg, createAgentWorkspace } from "../../../helpers/agents";
import { bootstrapOrg, tfe, workspaceRightsTokens } from "../../../helpers/nocode";
import type { NoCodeOrg } from "../../../helpers/nocode-modules";
import { type AppliedAgentRun, appliedAgentRun, followLink, md5Hex } from "./run-data-helpers";

let ctx: NoCodeOrg;
let poolId: string;
let poolToken: string;
let applied: AppliedAgentRun;
/** Every token kind of the matrix. */
let tokens: {
  owner: string;
  manageTeam: string;
  manageUser: string;
  readTeam: string;
  orgToken: string;
  otherOwner: string;
};

beforeAll(async () => {
  ({ ctx, poolId, poolToken } = await agentPoolOrg());
  applied = await appliedAgentRun(ctx, poolId, poolToken);
  tokens = {
    owner: ctx.ownerToken,
    ...(await workspaceRightsTokens(ctx.org)),
    otherOwner: (await bootstrapOrg()).ownerToken,
  };
}, 60_000);

/** The current state version as `token` sees it. */
const current = (token: string) => tfe("GET", `workspaces/${applied.workspaceId}/current-state-version`, { token });

describe("state versions (N20)", () => {
  it("current-state-version and state-versions/:id answer HCP's shape; md5 and size are the uploaded state's", async () => {
    const res = await current(tokens.owner);
    expect(res.status).toBe(200);
    const sv = res.json.data;
    expect(sv.type).toBe("state-versions");
    expect(sv.attributes).toMatchObject({
      serial: 1,
      lineage: "lineage-run-data",
      md5: await md5Hex(applied.stateBytes),
      size: applied.stateBytes.length,
      status: "finalized",
      "resources-processed": true,
      "state-kind": "engine",
      resources: [{ address: "terraform_data.a" }],
    });
    expect(sv.attributes["hosted-state-download-url"]).toMatch(
      /^http:\/\/keyway\.test\/api\/v2\/signed\/state-versions\//,
    );
    expect(sv.relationships.outputs.data).toHaveLength(3);
    const shown = await tfe("GET", `state-versions/${sv.id}`, { token: tokens.owner });
    expect(shown.status).toBe(200);
    expect(shown.json.data.attributes.md5).toBe(sv.attributes.md5);
  });

  it("the download link serves the state byte for byte (md5 equal), no-store and no-referrer, without a token", async () => {
    const sv = (await current(tokens.manageTeam)).json.data;
    const url = sv.attributes["hosted-state-download-url"];
    expect(url).toBeTypeOf("string");
    const got = await followLink(url);
    expect(got.status).toBe(200);
    expect(got.headers.get("cache-control")).toBe("no-store");
    expect(got.headers.get("referrer-policy")).toBe("no-referrer");
    const bytes = new TextEncoder().encode(got.text);
    expect(await md5Hex(bytes)).toBe(sv.attributes.md5);
  });

  it("the download link is null for callers who may not download (read-workspaces team, organization token)", async () => {
    for (const token of [tokens.readTeam, tokens.orgToken]) {
      const res = await current(token);
      expect(res.status).toBe(200);
      expect(res.json.data.attributes["hosted-state-download-url"]).toBeNull();
    }
    for (const token of [tokens.owner, tokens.manageTeam, tokens.manageUser]) {
      expect((await current(token)).json.data.attributes["hosted-state-download-url"]).toBeTypeOf("string");
    }
    expect((await current(tokens.otherOwner)).status).toBe(404);
  });

  it("a tampered, expired or other-purpose link is 404 with B23's headers", async () => {
    const sv = (await current(tokens.owner)).json.data;
    const url = new URL(sv.attributes["hosted-state-download-url"]);
    const sig = url.searchParams.get("signature")!;
    const tampered = new URL(url);
    tampered.searchParams.set("signature", `${sig[0] === "A" ? "B" : "A"}${sig.slice(1)}`);
    const expired = await signLink(
      env.KEYWAY_HASH_KEY,
      { purpose: "state-download", id: sv.id },
      Date.now() - 120_000,
      60,
    );
    const otherPurpose = await signLink(
      env.KEYWAY_HASH_KEY,
      { purpose: "json-plan-download", id: sv.id },
      Date.now(),
      60,
    );
    const otherId = await signLink(
      env.KEYWAY_HASH_KEY,
      { purpose: "state-download", id: "sv-AAAAAAAAAAAAAAAA" },
      Date.now(),
      60,
    );
    const base = `${url.origin}${url.pathname}`;
    for (const link of [
      tampered.toString(),
      `${base}?expires=${expired.expiry}&signature=${expired.signature}`,
      `${base}?expires=${otherPurpose.expiry}&signature=${otherPurpose.signature}`,
      `${base}?expires=${otherId.expiry}&signature=${otherId.signature}`,
      `${base}?expires=${Number(url.searchParams.get("expires")) + 1}&signature=${sig}`,
      base,
    ]) {
      const res = await followLink(link);
      expect(res.status, link).toBe(404);
      expect(res.headers.get("cache-control")).toBe("no-store");
      expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    }
  });

  it("current-state-version is 404 when the workspace has no state yet", async () => {
    const { workspace } = await createAgentWorkspace(ctx, poolId);
    expect((await tfe("GET", `workspaces/${workspace.id}/current-state-version`, { token: tokens.owner })).status).toBe(
      404,
    );
    expect(
      (await tfe("GET", `workspaces/${workspace.id}/current-state-version-outputs`, { token: tokens.owner })).status,
    ).toBe(404);
  });

  it("the workspace's permissions follow N20 (raw state: manage-workspaces users and teams; outputs: readers)", async () => {
    const remote = await tfe("GET", `workspaces/${applied.workspaceId}`, { token: tokens.owner });
    expect(remote.json.data.attributes.permissions).toMatchObject({
      "can-read-state-versions": true,
      "can-read-state-outputs": true,
      "can-force-unlock": true,
      "can-create-state-versions": true,
    });
    const asReader = await tfe("GET", `workspaces/${applied.workspaceId}`, { token: tokens.readTeam });
    expect(asReader.json.data.attributes.permissions).toMatchObject({
      "can-read-state-versions": false,
      "can-read-state-outputs": true,
      "can-lock": false,
      "can-force-unlock": false,
      "can-create-state-versions": false,
    });
    const asOrg = await tfe("GET", `workspaces/${applied.workspaceId}`, { token: tokens.orgToken });
    expect(asOrg.json.data.attributes.permissions["can-read-state-versions"]).toBe(false);
  });
});

describe("state version outputs (N20)", () => {
  it("current-state-version-outputs shows values, the sensitive one null, with type and detailed-type", async () => {
    for (const token of [tokens.owner, tokens.readTeam, tokens.orgToken]) {
      const res = await tfe("GET", `workspaces/${applied.workspaceId}/current-state-version-outputs`, { token });
      expect(res.status).toBe(200);
      const byName = Object.fromEntries(
        res.json.data.map((o: { attributes: { name: string } }) => [o.attributes.name, o.attributes]),
      );
      expect(byName.name).toEqual({
        name: "name",
        sensitive: false,
        type: "string",
        value: "pet-fluffy",
        "detailed-type": "string",
      });
      expect(byName.secret).toEqual({
        name: "secret",
        sensitive: true,
        type: "string",
        value: null,
        "detailed-type": "string",
      });
      expect(byName.zones).toMatchObject({ type: "array", value: ["a", "b"], "detailed-type": ["list", "string"] });
      expect(res.json.meta.pagination["total-count"]).toBe(3);
    }
    expect(
      (
        await tfe("GET", `workspaces/${applied.workspaceId}/current-state-version-outputs`, {
          token: tokens.otherOwner,
        })
      ).status,
    ).toBe(404);
  });

  it("state-versions/:id/outputs pages, sensitive values null", async () => {
    const sv = (await current(tokens.owner)).json.data;
    const page = await tfe("GET", `state-versions/${sv.id}/outputs?page[size]=2&page[number]=2`, {
      token: tokens.readTeam,
    });
    expect(page.status).toBe(200);
    expect(page.json.data).toHaveLength(1);
    expect(page.json.meta.pagination).toMatchObject({ "current-page": 2, "total-count": 3, "total-pages": 2 });
    const all = await tfe("GET", `state-versions/${sv.id}/outputs`, { token: tokens.owner });
    const secret = all.json.data.find((o: { attributes: { name: string } }) => o.attributes.name === "secret");
    expect(secret.attributes.value).toBeNull();
  });

  it("a sensitive value through state-version-outputs/:id: manage-workspaces users and teams only", async () => {
    const list = await tfe("GET", `workspaces/${applied.workspaceId}/current-state-version-outputs`, {
      token: tokens.owner,
    });
    const idOf = (name: string) =>
      list.json.data.find((o: { attributes: { name: string } }) => o.attributes.name === name).id as string;
    const secretId = idOf("secret");
    expect(secretId).toMatch(/^wsout-/);
    for (const token of [tokens.owner, tokens.manageTeam, tokens.manageUser]) {
      const res = await tfe("GET", `state-version-outputs/${secretId}`, { token });
      expect(res.status).toBe(200);
      expect(res.json.data.attributes).toMatchObject({ name: "secret", sensitive: true, value: "hunter2" });
    }
    for (const token of [tokens.readTeam, tokens.orgToken, tokens.otherOwner]) {
      expect((await tfe("GET", `state-version-outputs/${secretId}`, { token })).status).toBe(404);
    }
    // A plain output reads with read-workspaces (the organization token included).
    for (const token of [tokens.readTeam, tokens.orgToken]) {
      const res = await tfe("GET", `state-version-outputs/${idOf("name")}`, { token });
      expect(res.status).toBe(200);
      expect(res.json.data.attributes.value).toBe("pet-fluffy");
    }
    for (const bad of ["wsout-AAAAAAAAAAAAAAAA-0", `${secretId}9`, "wsout-x", `${secretId.slice(0, -2)}-99`]) {
      expect((await tfe("GET", `state-version-outputs/${bad}`, { token: tokens.owner })).status).toBe(404);
    }
  });
});
