/**
 * N19's migration of existing agent workspaces (migrations/0041): their runs become agent
 * runs; every one that has not ended is discarded with "planned by the built-in planner
 * before agents ran this workspace"; ended runs and their structural state versions stay
 * (listed, never given to an agent, so the next agent job starts with no state); remote
 * workspaces are untouched and keep the built-in planner, which their plans say.
 *
 * The "before" is made the way such a deployment had it: workspaces planned by the built-in
 * planner, then marked `agent` with their runs marked `remote` (the column's default before
 * 0040). Then 0041's statements run again, as they ran at deploy.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { createPool } from "../../../helpers/agents";
import { tfe } from "../../../helpers/nocode";
import { createNoCodeWorkspace, type NoCodeOrg, noCodeOrg, waitForRun } from "../../../helpers/nocode-modules";

let ctx: NoCodeOrg;
beforeAll(async () => {
  ctx = await noCodeOrg();
});

/** Mark a remote workspace `agent` as the deployment before this change could hold it. */
async function asOldAgentWorkspace(workspaceId: string, poolId: string): Promise<void> {
  await env.DB.batch([
    env.DB.prepare("UPDATE workspaces SET execution_mode = 'agent', agent_pool_id = ? WHERE id = ?").bind(
      poolId,
      workspaceId,
    ),
    env.DB.prepare("UPDATE runs SET execution_mode = 'remote' WHERE workspace_id = ?").bind(workspaceId),
  ]);
}

/** Run migration 0041's statements. */
async function migrate(): Promise<void> {
  const migration = env.TEST_MIGRATIONS.find((m) => m.name.startsWith("0041_"));
  if (!migration) throw new Error("migration 0041 is missing");
  await env.DB.batch(migration.queries.map((q) => env.DB.prepare(q)));
}

describe("N19: the migration of existing agent workspaces", () => {
  it("discards runs that have not ended, keeps applied ones and their structural state, leaves remote workspaces alone", async () => {
    const poolId = await createPool(ctx);
    const applied = await createNoCodeWorkspace(ctx.noCodeModuleId, ctx.ownerToken, { "auto-apply": true });
    await waitForRun(applied.runId, ctx.ownerToken, ["applied"]);
    const planned = await createNoCodeWorkspace(ctx.noCodeModuleId, ctx.ownerToken);
    await waitForRun(planned.runId, ctx.ownerToken, ["planned"]);
    const remote = await createNoCodeWorkspace(ctx.noCodeModuleId, ctx.ownerToken);
    await waitForRun(remote.runId, ctx.ownerToken, ["planned"]);
    await asOldAgentWorkspace(applied.workspace.id, poolId);
    await asOldAgentWorkspace(planned.workspace.id, poolId);

    await migrate();
    await migrate(); // idempotent

    const discarded = await tfe("GET", `runs/${planned.runId}`, { token: ctx.ownerToken });
    expect(discarded.json.data.attributes).toMatchObject({
      status: "discarded",
      "status-reason": "planned by the built-in planner before agents ran this workspace",
    });
    expect(discarded.json.data.attributes["status-timestamps"]["discarded-at"]).toBeDefined();

    const kept = await tfe("GET", `runs/${applied.runId}`, { token: ctx.ownerToken });
    expect(kept.json.data.attributes.status).toBe("applied");
    const ws = await tfe("GET", `workspaces/${applied.workspace.id}`, { token: ctx.ownerToken });
    const svId = ws.json.data.relationships["current-state-version"].data.id;
    expect((await tfe("GET", `state-versions/${svId}`, { token: ctx.ownerToken })).status).toBe(200);
    const row = await env.DB.prepare("SELECT kind, object_id FROM state_versions WHERE id = ?").bind(svId).first();
    expect(row).toEqual({ kind: "structural", object_id: null });

    const untouched = await tfe("GET", `runs/${remote.runId}`, { token: ctx.ownerToken });
    expect(untouched.json.data.attributes.status).toBe("planned");
    const plan = await tfe("GET", `runs/${remote.runId}/plan`, { token: ctx.ownerToken });
    expect(plan.json.data.attributes["execution-details"]).toEqual({ mode: "remote", planner: "structural" });
  });
});
