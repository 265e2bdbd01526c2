/**
 * E6 `GET /no-code-modules/:id/workspaces/:workspace_id/upgrade/:run_id` (seed E6;
 * decisions N8, N10; HCP Terraform's no-code provisioning API (E6), go-tfe's and the tfe provider's no-code tests).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { bootstrapOrg, createMember, createOrgToken, tfe } from "../../../helpers/nocode";
import {
  e5,
  e6,
  e7,
  UPGRADE_TEST_TIMEOUT,
  upgradeModule,
  upgradePool,
  upgradeWorkspace,
  waitForUpgrade,
} from "./upgrade-helpers";

let pool: Awaited<ReturnType<typeof upgradePool>>;
beforeAll(async () => {
  pool = await upgradePool(8);
}, UPGRADE_TEST_TIMEOUT);

/** A pool workspace with a fresh upgrade plan. */
async function planned() {
  const ctx = { ...pool, ...pool.take() };
  const res = await e5(ctx.noCodeModuleId, ctx.workspaceId, ctx.ownerToken);
  expect(res.status, res.text).toBe(200);
  return { ...ctx, runId: res.json.data.id as string, planUrl: res.json.data.attributes["plan-url"] as string };
}

describe("E6 read upgrade status", { timeout: UPGRADE_TEST_TIMEOUT }, () => {
  it("the same workspace-upgrade shape with the current status, which stays planned until confirmed", async () => {
    const ctx = await planned();
    const res = await e6(ctx.noCodeModuleId, ctx.workspaceId, ctx.runId, ctx.ownerToken);
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/vnd.api+json");
    expect(res.json.data).toEqual({
      id: ctx.runId,
      type: "workspace-upgrade",
      attributes: {
        status: "planned",
        "plan-url": expect.stringMatching(
          new RegExp(`^http://keyway\\.test/app/${ctx.org}/workspaces/[^/]+/runs/${ctx.runId}\\?view=`),
        ),
      },
      relationships: { workspace: { data: { id: ctx.workspaceId, type: "workspaces" } } },
    });
    // the plan-url points at the same page as E5's (the token is signed afresh)
    expect(res.json.data.attributes["plan-url"].split("?")[0]).toBe(ctx.planUrl.split("?")[0]);
    await new Promise((r) => setTimeout(r, 500));
    expect((await e6(ctx.noCodeModuleId, ctx.workspaceId, ctx.runId, ctx.ownerToken)).json.data.attributes.status).toBe(
      "planned",
    );
  });

  it("after E7 the status moves on until the terminal applied", async () => {
    const ctx = await planned();
    expect((await e7(ctx.noCodeModuleId, ctx.workspaceId, ctx.runId, ctx.ownerToken)).status).toBe(200);
    const final = await waitForUpgrade(ctx.noCodeModuleId, ctx.workspaceId, ctx.runId, ctx.ownerToken, ["applied"]);
    expect(final).toMatchObject({ id: ctx.runId, type: "workspace-upgrade", attributes: { status: "applied" } });
  });

  it("an unknown run id → 404", async () => {
    const ctx = { ...pool, ...pool.take() };
    const res = await e6(ctx.noCodeModuleId, ctx.workspaceId, "run-AAAAAAAAAAAAAAAA", ctx.ownerToken);
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ errors: [{ status: "404", title: "not found" }] });
    expect((await e6(ctx.noCodeModuleId, ctx.workspaceId, "not-a-run", ctx.ownerToken)).status).toBe(404);
  });

  it("N8: a run that is not an upgrade run of that module and workspace → 404", async () => {
    const a = await planned();
    const b = await planned();
    // the workspace's first run (plan-and-apply) is not an upgrade run
    expect((await e6(a.noCodeModuleId, a.workspaceId, a.firstRunId, a.ownerToken)).status).toBe(404);
    // another workspace's upgrade run
    expect((await e6(a.noCodeModuleId, a.workspaceId, b.runId, a.ownerToken)).status).toBe(404);
    // the right run under another module (of the same organization)
    const other = await upgradeModule({ org: pool });
    expect((await e6(other.noCodeModuleId, a.workspaceId, a.runId, a.ownerToken)).status).toBe(404);
    // unknown module and workspace
    expect((await e6(`${a.noCodeModuleId}-invalid`, a.workspaceId, a.runId, a.ownerToken)).status).toBe(404);
    expect((await e6(a.noCodeModuleId, `${a.workspaceId}-invalid`, a.runId, a.ownerToken)).status).toBe(404);
    const otherWs = await upgradeWorkspace(other);
    expect((await e6(a.noCodeModuleId, otherWs.workspace.id, a.runId, a.ownerToken)).status).toBe(404);
  });

  it("N10: read-workspaces may read; the organization token, members without it and outsiders get 404; no token 401", async () => {
    const ctx = await planned();
    const reader = await createMember(ctx.org, { "read-workspaces": true });
    expect((await e6(ctx.noCodeModuleId, ctx.workspaceId, ctx.runId, reader.token)).status).toBe(200);
    const manager = await createMember(ctx.org, { "manage-workspaces": true });
    expect((await e6(ctx.noCodeModuleId, ctx.workspaceId, ctx.runId, manager.token)).status).toBe(200);
    const orgToken = await createOrgToken(ctx.org);
    const plain = await createMember(ctx.org, { "manage-modules": true });
    const outsider = await bootstrapOrg();
    for (const token of [orgToken, plain.token, outsider.ownerToken]) {
      expect((await e6(ctx.noCodeModuleId, ctx.workspaceId, ctx.runId, token)).status).toBe(404);
    }
    const none = await tfe(
      "GET",
      `no-code-modules/${ctx.noCodeModuleId}/workspaces/${ctx.workspaceId}/upgrade/${ctx.runId}`,
      { token: null },
    );
    expect(none.status).toBe(401);
  });
});
