/**
 * The recovery upload (decision N20): `POST /workspaces/:id/state-versions` in HCP's shape
 * (`serial`, `md5`, `lineage`, base64 `state`), owners only, the caller holding the lock,
 * and the same serial and lineage rules as an agent's upload.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { createAgentToken, createPool, stateWith } from "../../../helpers/agents";
import { createMember, createOrgToken, createTeam, createTeamToken, tfe } from "../../../helpers/nocode";
import { type NoCodeOrg, noCodeOrg } from "../../../helpers/nocode-modules";
import { type AppliedAgentRun, appliedAgentRun, followLink, md5Hex } from "./run-data-helpers";

let ctx: NoCodeOrg;
let applied: AppliedAgentRun;

beforeAll(async () => {
  ctx = await noCodeOrg();
  const poolId = await createPool(ctx);
  const poolToken = (await createAgentToken(poolId, ctx.ownerToken)).token;
  applied = await appliedAgentRun(ctx, poolId, poolToken);
}, 60_000);

/** HCP's request document of a state upload. */
async function upload(state: unknown, overrides: Record<string, unknown> = {}) {
  const bytes = new TextEncoder().encode(JSON.stringify(state));
  const s = state as { serial: number; lineage: string };
  return {
    data: {
      type: "state-versions",
      attributes: {
        serial: s.serial,
        lineage: s.lineage,
        md5: await md5Hex(bytes),
        state: btoa(String.fromCharCode(...bytes)),
        ...overrides,
      },
    },
  };
}

const post = (token: string, body: unknown) =>
  tfe("POST", `workspaces/${applied.workspaceId}/state-versions`, { token, body });
const act = (action: string, token: string) =>
  tfe("POST", `workspaces/${applied.workspaceId}/actions/${action}`, { token });

describe("recovery upload (N20)", () => {
  it("owners only; the caller must hold the lock", async () => {
    const next = await upload(stateWith(2, "lineage-run-data", ["terraform_data.a"]));
    const manager = (await createMember(ctx.org, { "manage-workspaces": true })).token;
    const readTeam = await createTeamToken(await createTeam(ctx.org, { "read-workspaces": true }));
    for (const token of [manager, readTeam, await createOrgToken(ctx.org)])
      expect((await post(token, next)).status).toBe(404);
    const unlocked = await post(ctx.ownerToken, next);
    expect(unlocked.status).toBe(409);
    expect(unlocked.json.errors[0].detail).toContain("locked by you");
    expect((await act("lock", manager)).status).toBe(200);
    expect((await post(ctx.ownerToken, next)).status).toBe(409);
    expect((await act("unlock", manager)).status).toBe(200);
  });

  it("serial, lineage and md5 rules; a valid upload becomes the current state version", async () => {
    expect((await act("lock", ctx.ownerToken)).status).toBe(200);
    const cases: [unknown, number, string][] = [
      [await upload(stateWith(2, "another-lineage", [])), 409, "lineage mismatch"],
      [await upload(stateWith(0, "lineage-run-data", [])), 409, "serial 0 is not above the current 1"],
      [
        await upload(stateWith(1, "lineage-run-data", ["terraform_data.changed"])),
        409,
        "serial 1 is not above the current 1",
      ],
      [await upload(stateWith(2, "lineage-run-data", []), { md5: "0".repeat(32) }), 422, "Md5 does not match"],
      [await upload(stateWith(2, "lineage-run-data", []), { serial: 3 }), 422, "Serial does not match"],
      [await upload(stateWith(2, "lineage-run-data", []), { lineage: "x" }), 422, "Lineage does not match"],
      [await upload(stateWith(2, "lineage-run-data", []), { state: "!!!" }), 422, "base64"],
      [{ data: { type: "state-versions", attributes: { serial: 2 } } }, 422, ""],
    ];
    for (const [body, status, detail] of cases) {
      const res = await post(ctx.ownerToken, body);
      expect(res.status, res.text).toBe(status);
      expect(JSON.stringify(res.json.errors)).toContain(detail);
    }
    const before = await tfe("GET", `workspaces/${applied.workspaceId}/current-state-version`, {
      token: ctx.ownerToken,
    });
    expect(before.json.data.attributes.serial).toBe(1);

    // The current state again: a no-op (200, no new version).
    const same = JSON.parse(new TextDecoder().decode(applied.stateBytes));
    const noop = await post(ctx.ownerToken, await upload(same));
    expect(noop.status).toBe(200);
    expect(noop.json.data.id).toBe(before.json.data.id);

    const state = stateWith(2, "lineage-run-data", ["terraform_data.a", "terraform_data.b"], {
      name: { value: "recovered", type: "string" },
    });
    const created = await post(ctx.ownerToken, await upload(state));
    expect(created.status).toBe(201);
    expect(created.json.data.attributes).toMatchObject({
      serial: 2,
      lineage: "lineage-run-data",
      "state-kind": "engine",
    });
    expect(created.json.data.relationships.run.data).toBeNull();
    const current = await tfe("GET", `workspaces/${applied.workspaceId}/current-state-version`, {
      token: ctx.ownerToken,
    });
    expect(current.json.data.id).toBe(created.json.data.id);
    const downloaded = await followLink(current.json.data.attributes["hosted-state-download-url"]);
    expect(JSON.parse(downloaded.text)).toEqual(state);
    const outputs = await tfe("GET", `workspaces/${applied.workspaceId}/current-state-version-outputs`, {
      token: ctx.ownerToken,
    });
    expect(outputs.json.data.map((o: { attributes: { value: unknown } }) => o.attributes.value)).toEqual(["recovered"]);
    const ws = await tfe("GET", `workspaces/${applied.workspaceId}`, { token: ctx.ownerToken });
    expect(ws.json.data.attributes["resource-count"]).toBe(2);
    expect((await act("unlock", ctx.ownerToken)).status).toBe(200);
  });
});
