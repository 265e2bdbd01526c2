/**
 * E5 `POST /no-code-modules/:id/workspaces/:workspace_id/upgrade` (seed E5; decisions N7,
 * N8, N10; reference §3 E5, §8 items 31–34, 40).
 */
import { describe, expect, it } from "vitest";
import { tfe } from "../../helpers/nocode";
import { varEntry } from "../../helpers/nocode-modules";
import { actionsByAddress, e5, FIRST_PASSWORD, upgradePath, upgradeReady } from "./upgrade-helpers";

describe("E5 initiate upgrade", () => {
  it("item 31: pin 1.0.0 → workspace → pin 1.1.0 → E5 (empty body) → a planned workspace-upgrade with an absolute plan-url", async () => {
    const ctx = await upgradeReady();
    const res = await tfe("POST", upgradePath(ctx.noCodeModuleId, ctx.workspaceId), { token: ctx.ownerToken });
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/vnd.api+json");
    const data = res.json.data;
    expect(data.type).toBe("workspace-upgrade");
    expect(data.id).toMatch(/^run-[A-Za-z0-9]{16}$/);
    expect(data.attributes.status).toBe("planned");
    expect(data.attributes["plan-url"]).toMatch(
      new RegExp(`^http://keyway\\.test/app/${ctx.org}/workspaces/${ctx.workspace.attributes.name}/runs/${data.id}\\?view=[0-9]+\\.[A-Za-z0-9_-]{43}$`),
    );
    expect(data.relationships.workspace.data).toEqual({ id: ctx.workspaceId, type: "workspaces" });
    // N8: an ordinary workspace run of kind upgrade that becomes latest-run
    const ws = await tfe("GET", `workspaces/${ctx.workspaceId}`, { token: ctx.ownerToken });
    expect(ws.json.data.relationships["latest-run"].data.id).toBe(data.id);
    const run = await tfe("GET", `runs/${data.id}`, { token: ctx.ownerToken });
    expect(run.json.data.attributes.status).toBe("planned");
  });

  it("plans v1 → v2: an added, a removed and a changed resource, and a variable reaching a resource through locals", async () => {
    const ctx = await upgradeReady();
    const res = await e5(ctx.noCodeModuleId, ctx.workspaceId, ctx.ownerToken, [varEntry("region", "us-east-1")]);
    expect(res.status, res.text).toBe(200);
    const runId = res.json.data.id;
    const plan = await tfe("GET", `runs/${runId}/plan`, { token: ctx.ownerToken });
    expect(plan.json.data.attributes).toMatchObject({
      "has-changes": true,
      "resource-additions": 1,
      "resource-changes": 2,
      "resource-destructions": 1,
    });
    const json = await tfe("GET", `plans/${plan.json.data.id}/json-output`, { token: ctx.ownerToken });
    expect(actionsByAddress(json.json.resource_changes)).toEqual({
      "module.labels.random_integer.n": "no-op",
      "module.labels.random_pet.label": "no-op",
      "module.remote": "no-op",
      "random_id.legacy": "delete",
      "random_password.db": "no-op",
      "random_pet.name": "update",
      "random_string.suffix": "update",
      "random_uuid.added": "create",
    });
    void FIRST_PASSWORD;
  });
});
