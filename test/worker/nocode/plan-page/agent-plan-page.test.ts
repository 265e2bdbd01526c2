/**
 * The plan page of an agent run (decision N19): while the run waits, it says for an agent of
 * which pool; once planned, it shows the engine's changes from the JSON plan the agent
 * uploaded (test/fixtures/terraform-plan, recorded from Terraform 1.11.4) attribute by
 * attribute — an update in place, a replacement and what forces it, values known after
 * apply, output changes — and never a sensitive value: the recorded passwords appear in the
 * JSON plan, never on the page.
 */
import { beforeAll, describe, expect, it } from "vitest";
import changePlanText from "../../../fixtures/terraform-plan/terraform-1.11.4/change.json?raw";
import {
  createAgentToken,
  createAgentWorkspace,
  createPool,
  jsonPlanCreating,
  planNextJob,
  registerAgent,
} from "../../../helpers/agents";
import { tfe, uniqueName } from "../../../helpers/nocode";
import { type NoCodeOrg, noCodeOrg, varEntry, waitForRun } from "../../../helpers/nocode-modules";
import { getPage } from "../upgrade/upgrade-helpers";

const SECRETS = ["first-recorded-password", "second-recorded-password"];

let ctx: NoCodeOrg;
let poolId: string;
let poolName: string;
let poolToken: string;

beforeAll(async () => {
  ctx = await noCodeOrg();
  poolName = uniqueName("pool");
  poolId = await createPool(ctx, poolName);
  poolToken = (await createAgentToken(poolId, ctx.ownerToken)).token;
});

describe("the plan page of an agent run (N19)", () => {
  it("says which pool's agent the run waits for, then shows the engine's changes with sensitive values masked", async () => {
    const { workspace, runId } = await createAgentWorkspace(ctx, poolId, { "auto-apply": false }, [
      varEntry("prefix", "pet"),
    ]);
    const name = workspace.attributes.name as string;
    const path = `/app/${ctx.org}/workspaces/${name}/runs/${runId}`;
    const auth = { Authorization: `Bearer ${ctx.ownerToken}` };

    const waiting = await getPage(path, auth);
    expect(waiting.status).toBe(409);
    expect(waiting.text).toContain(`waiting for an agent of pool ${poolName}`);

    const plan = JSON.parse(changePlanText);
    for (const secret of SECRETS) expect(changePlanText).toContain(secret);
    const ws = await tfe("GET", `workspaces/${workspace.id}`, { token: ctx.ownerToken });
    const session = await registerAgent(poolToken, ws.json.data.attributes["terraform-version"], "agent-plan-page");
    await planNextJob(session, plan);
    await waitForRun(runId, ctx.ownerToken, ["planned"]);

    const page = await getPage(path, auth);
    expect(page.status).toBe(200);
    for (const secret of SECRETS) expect(page.text).not.toContain(secret);
    const text = page.text;
    expect(text).toContain("<code>terraform_data.server</code> will be updated in-place");
    expect(text).toContain("<code>terraform_data.generation</code> must be replaced");
    expect(text).toContain("replace because cannot update");
    expect(text).toMatch(/<code>triggers_replace\[0\]<\/code> <strong class="forces">forces replacement<\/strong>/);
    expect(text).toMatch(/<code>input\.size<\/code><\/th><td><code>1<\/code><\/td><td><code>2<\/code><\/td>/);
    expect(text).toMatch(
      /<code>input\.password<\/code><\/th><td><span class="sensitive">\(sensitive value\)<\/span><\/td><td><span class="sensitive">\(sensitive value\)<\/span><\/td>/,
    );
    expect(text).toContain('<span class="unknown">(known after apply)</span>');
    expect(text).toContain("Output changes");
    expect(text).toMatch(
      /<code>address<\/code><\/th><td>changed<\/td><td><code>&quot;alpha\.example\.test&quot;<\/code>/,
    );
    expect(text).toContain("Planned by agent agent-plan-page of pool");
    expect(text).toContain("Plan: 1 to add, 2 to change, 1 to destroy.");
  });

  it("a JSON plan above 4 MiB, or one it cannot describe, lists the addresses and actions and says why", async () => {
    const big = { ...jsonPlanCreating(["terraform_data.big"]), padding: "x".repeat(4 * 1024 * 1024 + 1) };
    const odd = jsonPlanCreating(["terraform_data.odd"]);
    odd.resource_changes[0]!.change.actions = ["create", "update"];
    const cases = [
      { plan: big, address: "terraform_data.big", note: "too large to show attribute by attribute" },
      { plan: odd, address: "terraform_data.odd", note: "cannot be shown attribute by attribute" },
    ];
    for (const { plan, address, note } of cases) {
      const { workspace, runId } = await createAgentWorkspace(ctx, poolId, { "auto-apply": false }, [
        varEntry("prefix", "pet"),
      ]);
      const ws = await tfe("GET", `workspaces/${workspace.id}`, { token: ctx.ownerToken });
      const session = await registerAgent(poolToken, ws.json.data.attributes["terraform-version"]);
      await planNextJob(session, plan);
      await waitForRun(runId, ctx.ownerToken, ["planned"]);
      const page = await getPage(`/app/${ctx.org}/workspaces/${workspace.attributes.name}/runs/${runId}`, {
        Authorization: `Bearer ${ctx.ownerToken}`,
      });
      expect(page.status).toBe(200);
      expect(page.text).toContain(note);
      expect(page.text).toContain(`<code>${address}</code>`);
    }
  });
});
