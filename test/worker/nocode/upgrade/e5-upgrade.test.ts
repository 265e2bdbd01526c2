/**
 * E5 `POST /no-code-modules/:id/workspaces/:workspace_id/upgrade` (seed E5; decisions N3,
 * N5, N7, N8, N10; HCP Terraform's no-code provisioning API (E5), go-tfe's and the tfe
 * provider's no-code tests). Plans are checked against expectations written by hand from
 * test/fixtures/terraform-upgrade (see ./upgrade-helpers.ts for what v1 → v2 changes).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { createMember, createOrgToken, createTeam, createTeamToken, jsonOutputOf, tfe } from "../../../helpers/nocode";
import { optionEntry, varEntry } from "../../../helpers/nocode-modules";
import {
  actionsByAddress,
  e5,
  FIRST_PASSWORD,
  patchModule,
  UPGRADE_TEST_TIMEOUT,
  upgradeModule,
  upgradePath,
  upgradePool,
  upgradeReady,
  upgradeWorkspace,
} from "./upgrade-helpers";

/** Workspaces applied at 1.0.0 of one module whose pin then moved to 1.1.0 (for tests that leave the module alone). */
let pool: Awaited<ReturnType<typeof upgradePool>>;
/** Another module of the same organization, still pinned at 1.0.0, with workspaces applied there. */
let samePin: Awaited<ReturnType<typeof upgradeModule>>;
let samePinWorkspaces: Awaited<ReturnType<typeof upgradeWorkspace>>[];
beforeAll(async () => {
  pool = await upgradePool(14);
  samePin = await upgradeModule({ org: pool });
  samePinWorkspaces = await Promise.all([
    ...[0, 1, 2, 3].map(() => upgradeWorkspace(samePin)),
    // [4] and [5]: first runs waiting at planned (no auto-apply)
    ...[4, 5].map(() => upgradeWorkspace(samePin, { applied: false })),
    // [6], [7], [8]: N8a guesses of the sensitive db_password
    ...[6, 7, 8].map(() => upgradeWorkspace(samePin)),
  ]);
}, UPGRADE_TEST_TIMEOUT);

/** A workspace of the pool, with the module's context. */
const fromPool = () => ({ ...pool, ...pool.take() });

/** The runs of a workspace, newest first. */
async function runsOf(workspaceId: string, token: string): Promise<{ id: string; attributes: { status: string } }[]> {
  return (await tfe("GET", `workspaces/${workspaceId}/runs`, { token })).json.data;
}

describe("E5 initiate upgrade: the planned answer", { timeout: UPGRADE_TEST_TIMEOUT }, () => {
  it("pin 1.0.0 → workspace → pin 1.1.0 → E5 (empty body) → a planned workspace-upgrade with an absolute plan-url", async () => {
    const ctx = fromPool();
    const res = await tfe("POST", upgradePath(ctx.noCodeModuleId, ctx.workspaceId), { token: ctx.ownerToken });
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/vnd.api+json");
    const data = res.json.data;
    expect(data.type).toBe("workspace-upgrade");
    expect(data.id).toMatch(/^run-[A-Za-z0-9]{16}$/);
    expect(data.attributes.status).toBe("planned");
    expect(data.attributes).not.toHaveProperty("message");
    expect(data.attributes["plan-url"]).toMatch(
      new RegExp(
        `^http://keyway\\.test/app/${ctx.org}/workspaces/${ctx.workspace.attributes.name}/runs/${data.id}\\?view=[0-9]+\\.[A-Za-z0-9_-]{43}$`,
      ),
    );
    expect(data.relationships.workspace.data).toEqual({ id: ctx.workspaceId, type: "workspaces" });
    // N8: an ordinary workspace run (kind upgrade) that becomes latest-run, waiting at planned
    const ws = await tfe("GET", `workspaces/${ctx.workspaceId}`, { token: ctx.ownerToken });
    expect(ws.json.data.relationships["latest-run"].data.id).toBe(data.id);
    expect(ws.json.data.attributes["no-code-upgrade-available"]).toBe(true);
    expect(ws.json.data.attributes["source-module-id"]).toMatch(/\/1\.0\.0$/);
    const run = await tfe("GET", `runs/${data.id}`, { token: ctx.ownerToken });
    expect(run.json.data.attributes).toMatchObject({ status: "planned", "auto-apply": false, "has-changes": true });
    expect((await runsOf(ctx.workspaceId, ctx.ownerToken)).map((r) => r.id)).toEqual([data.id, ctx.firstRunId]);
  });

  it("accepts go-tfe's `no-code-module-workspace` and pytfe's `workspaces` with empty attributes", async () => {
    const ctx = fromPool();
    const gotfe = await tfe("POST", upgradePath(ctx.noCodeModuleId, ctx.workspaceId), {
      token: ctx.ownerToken,
      body: { data: { type: "no-code-module-workspace" } },
    });
    expect(gotfe.status, gotfe.text).toBe(200);
    expect(gotfe.json.data.attributes.status).toBe("planned");
    // the first plan is fresh: a second E5 conflicts with it (see below); another workspace takes pytfe's body
    const other = fromPool();
    const pytfe = await tfe("POST", upgradePath(other.noCodeModuleId, other.workspaceId), {
      token: ctx.ownerToken,
      body: { data: { type: "workspaces", attributes: {} } },
    });
    expect(pytfe.status, pytfe.text).toBe(200);
    expect(pytfe.json.data.type).toBe("workspace-upgrade");
  });

  it("refuses another data.type and malformed vars with 422 invalid attribute", async () => {
    const ctx = fromPool();
    const badType = await tfe("POST", upgradePath(ctx.noCodeModuleId, ctx.workspaceId), {
      token: ctx.ownerToken,
      body: { data: { type: "runs" } },
    });
    expect(badType.status).toBe(422);
    expect(badType.json.errors[0]).toMatchObject({
      status: "422",
      title: "invalid attribute",
      source: { pointer: "/data/type" },
    });
    const badVar = await tfe("POST", upgradePath(ctx.noCodeModuleId, ctx.workspaceId), {
      token: ctx.ownerToken,
      body: {
        data: {
          type: "workspaces",
          relationships: {
            vars: { data: [{ type: "vars", attributes: { key: "region", value: 1, category: "engine" } }] },
          },
        },
      },
    });
    expect(badVar.status).toBe(422);
    expect(badVar.json.errors[0].source.pointer).toBe("/data/relationships/vars/data/0/attributes/value");
    const dup = await e5(ctx.noCodeModuleId, ctx.workspaceId, ctx.ownerToken, [
      varEntry("region", "a"),
      varEntry("region", "b"),
    ]);
    expect(dup.status).toBe(422);
    expect(dup.json.errors[0].detail).toBe("Key has already been taken");
    expect(await runsOf(ctx.workspaceId, ctx.ownerToken)).toHaveLength(1);
  });
});

describe("E5 plan contents (N7), checked against the fixtures by hand", { timeout: UPGRADE_TEST_TIMEOUT }, () => {
  it("v1 → v2 with region changed: random_uuid.added created, random_id.legacy destroyed, random_string.suffix updated (body), random_pet.name updated (region through two locals)", async () => {
    const ctx = fromPool();
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
    const json = await jsonOutputOf(plan.json.data.id, ctx.ownerToken);
    expect(json.status).toBe(200);
    expect(actionsByAddress(json.json.resource_changes)).toEqual({
      // local module: its argument `name = var.prefix` did not change
      "module.labels.random_integer.n": "no-op",
      "module.labels.random_pet.label": "no-op",
      // remote module: `length = var.length`, unchanged
      "module.remote": "no-op",
      "random_id.legacy": "delete",
      // db_password is the same sensitive value (same keyed hash)
      "random_password.db": "no-op",
      // random_pet.name: only comments changed in v2, but region → local.suffix → local.name_prefix → prefix
      "random_pet.name": "update",
      // random_string.suffix: special = false → true
      "random_string.suffix": "update",
      "random_uuid.added": "create",
    });
  });

  it("the same version with a changed variable updates only what it reaches; the reasons say why", async () => {
    // Workspace at 1.0.0, pin stays 1.0.0, option sets change (so an upgrade is due) and `length` changes.
    const ctx = await upgradeModule({ org: pool });
    const { workspace } = await upgradeWorkspace(ctx);
    await patchModule(ctx, {}, [optionEntry("length", ["8", "12"], "number")]);
    const res = await e5(ctx.noCodeModuleId, workspace.id, ctx.ownerToken, [varEntry("length", "12", { hcl: true })]);
    expect(res.status, res.text).toBe(200);
    const page = await tfe("GET", `runs/${res.json.data.id}/plan`, { token: ctx.ownerToken });
    const json = await jsonOutputOf(page.json.data.id, ctx.ownerToken);
    expect(actionsByAddress(json.json.resource_changes)).toEqual({
      "module.labels.random_integer.n": "no-op",
      "module.labels.random_pet.label": "no-op",
      // a remote module call is one node; its argument references var.length
      "module.remote": "update",
      "random_id.legacy": "no-op",
      "random_password.db": "no-op",
      "random_pet.name": "no-op",
      "random_string.suffix": "update",
    });
    expect(page.json.data.attributes).toMatchObject({
      "resource-additions": 0,
      "resource-changes": 2,
      "resource-destructions": 0,
    });
  });

  it("a new sensitive value updates the resource that references it, compared by keyed hash", async () => {
    const ctx = fromPool();
    const res = await e5(ctx.noCodeModuleId, ctx.workspaceId, ctx.ownerToken, [
      varEntry("db_password", "another-password-2", { sensitive: true }),
    ]);
    expect(res.status, res.text).toBe(200);
    const plan = await tfe("GET", `runs/${res.json.data.id}/plan`, { token: ctx.ownerToken });
    const json = await jsonOutputOf(plan.json.data.id, ctx.ownerToken);
    expect(actionsByAddress(json.json.resource_changes)).toMatchObject({
      "random_password.db": "update",
      "random_pet.name": "no-op",
    });
    expect(json.text).not.toContain("another-password-2");
    expect(json.text).not.toContain(FIRST_PASSWORD);
  });

  it("an upgrade with an empty plan still waits at planned with a plan-url (N7, N8)", async () => {
    const ctx = await upgradeModule({ org: pool });
    const { workspace } = await upgradeWorkspace(ctx);
    // Only the option sets change: an upgrade is due, but no resource changes.
    await patchModule(ctx, {}, [optionEntry("region", ["eu-west-1", "us-east-1"])]);
    const ws = await tfe("GET", `workspaces/${workspace.id}`, { token: ctx.ownerToken });
    expect(ws.json.data.attributes["no-code-upgrade-available"]).toBe(true);
    const res = await e5(ctx.noCodeModuleId, workspace.id, ctx.ownerToken);
    expect(res.status, res.text).toBe(200);
    expect(res.json.data.attributes.status).toBe("planned");
    expect(res.json.data.attributes["plan-url"]).toContain(`/runs/${res.json.data.id}?view=`);
    const plan = await tfe("GET", `runs/${res.json.data.id}/plan`, { token: ctx.ownerToken });
    expect(plan.json.data.attributes).toMatchObject({
      "has-changes": false,
      "resource-additions": 0,
      "resource-changes": 0,
      "resource-destructions": 0,
    });
    await new Promise((r) => setTimeout(r, 300));
    expect((await tfe("GET", `runs/${res.json.data.id}`, { token: ctx.ownerToken })).json.data.attributes.status).toBe(
      "planned",
    );
  });
});

describe("E5 with nothing to upgrade (N8)", { timeout: UPGRADE_TEST_TIMEOUT }, () => {
  it("the workspace already runs the pin → 200 with only a message, and nothing is created", async () => {
    const ctx = samePin;
    const { workspace, firstRunId } = samePinWorkspaces[0]!;
    const res = await e5(ctx.noCodeModuleId, workspace.id, ctx.ownerToken);
    expect(res.status, res.text).toBe(200);
    expect(res.json.data.type).toBe("workspace-upgrade");
    expect(res.json.data.attributes).toEqual({ message: expect.stringContaining("No upgrade available") });
    expect(res.json.data.attributes).not.toHaveProperty("status");
    expect(res.json.data.attributes).not.toHaveProperty("plan-url");
    expect(res.json.data.relationships.workspace.data.id).toBe(workspace.id);
    expect((await runsOf(workspace.id, ctx.ownerToken)).map((r) => r.id)).toEqual([firstRunId]);
  });

  it("given vars that change no effective value (a default restated) still create nothing", async () => {
    const ctx = samePin;
    const { workspace, firstRunId } = samePinWorkspaces[1]!;
    const res = await e5(ctx.noCodeModuleId, workspace.id, ctx.ownerToken, [varEntry("region", "eu-west-1")]);
    expect(res.status, res.text).toBe(200);
    expect(res.json.data.attributes.message).toContain("No upgrade available");
    expect((await runsOf(workspace.id, ctx.ownerToken)).map((r) => r.id)).toEqual([firstRunId]);
    // and no var was written
    const vars = await tfe("GET", `workspaces/${workspace.id}/vars`, { token: ctx.ownerToken });
    expect(vars.json.data.map((v: { attributes: { key: string } }) => v.attributes.key)).toEqual(["db_password"]);
  });

  it("N8a: a right and a wrong guess of a sensitive value answer alike — both plan, both update what it reaches", async () => {
    const ctx = samePin;
    const answers = [];
    for (const [index, guess, flag] of [
      [6, FIRST_PASSWORD, true],
      [7, "a-wrong-guess", true],
      // the body's flag does not matter: the stored var is sensitive
      [8, FIRST_PASSWORD, false],
    ] as const) {
      const { workspace, firstRunId } = samePinWorkspaces[index]!;
      const res = await e5(ctx.noCodeModuleId, workspace.id, ctx.ownerToken, [
        varEntry("db_password", guess, { sensitive: flag }),
      ]);
      expect(res.status, res.text).toBe(200);
      expect(res.json.data.attributes.status, `guess ${index}`).toBe("planned");
      expect(res.json.data.attributes).not.toHaveProperty("message");
      expect((await runsOf(workspace.id, ctx.ownerToken)).map((r) => r.id)).toEqual([res.json.data.id, firstRunId]);
      const plan = await tfe("GET", `runs/${res.json.data.id}/plan`, { token: ctx.ownerToken });
      const json = await jsonOutputOf(plan.json.data.id, ctx.ownerToken);
      expect(json.text).not.toContain(guess);
      answers.push({ attributes: plan.json.data.attributes, actions: actionsByAddress(json.json.resource_changes) });
    }
    expect(answers[0]!.actions["random_password.db"]).toBe("update");
    for (const answer of answers.slice(1)) {
      expect(answer.actions).toEqual(answers[0]!.actions);
      expect(answer.attributes["resource-changes"]).toBe(answers[0]!.attributes["resource-changes"]);
    }
  });

  it("right after E4: the first run is still in progress → the message, nothing created", async () => {
    const { workspace, firstRunId } = samePinWorkspaces[4]!;
    const res = await e5(samePin.noCodeModuleId, workspace.id, samePin.ownerToken);
    expect(res.status, res.text).toBe(200);
    expect(res.json.data.attributes.message).toContain("No upgrade available");
    expect((await runsOf(workspace.id, samePin.ownerToken)).map((r) => r.id)).toEqual([firstRunId]);
  });

  it("at the pin, but the last run was discarded (nothing applied): E5 plans it again", async () => {
    const { workspace, firstRunId } = samePinWorkspaces[5]!;
    expect((await tfe("POST", `runs/${firstRunId}/actions/discard`, { token: samePin.ownerToken })).status).toBe(202);
    const res = await e5(samePin.noCodeModuleId, workspace.id, samePin.ownerToken);
    expect(res.status, res.text).toBe(200);
    expect(res.json.data.attributes.status).toBe("planned");
    const plan = await tfe("GET", `runs/${res.json.data.id}/plan`, { token: samePin.ownerToken });
    // nothing was ever applied: every node of v1 is created
    expect(plan.json.data.attributes).toMatchObject({
      "resource-additions": 7,
      "resource-changes": 0,
      "resource-destructions": 0,
    });
  });

  it("at the pin, a given var that changes a value plans an upgrade", async () => {
    const ctx = samePin;
    const { workspace } = samePinWorkspaces[2]!;
    const res = await e5(ctx.noCodeModuleId, workspace.id, ctx.ownerToken, [varEntry("prefix", "web")]);
    expect(res.status, res.text).toBe(200);
    expect(res.json.data.attributes.status).toBe("planned");
    const plan = await tfe("GET", `runs/${res.json.data.id}/plan`, { token: ctx.ownerToken });
    const json = await jsonOutputOf(plan.json.data.id, ctx.ownerToken);
    // prefix reaches random_pet.name through local.name_prefix and every node of module.labels through its argument
    expect(actionsByAddress(json.json.resource_changes)).toMatchObject({
      "module.labels.random_integer.n": "update",
      "module.labels.random_pet.label": "update",
      "random_pet.name": "update",
      "random_string.suffix": "no-op",
    });
  });
});

describe("E5 and runs in progress (N8)", { timeout: UPGRADE_TEST_TIMEOUT }, () => {
  it("409 while the workspace has a non-terminal run (its first run waiting at planned)", async () => {
    const ctx = await upgradeModule({ org: pool });
    const { workspace, firstRunId } = await upgradeWorkspace(ctx, { applied: false });
    await patchModule(ctx, { "version-pin": "1.1.0" });
    const res = await e5(ctx.noCodeModuleId, workspace.id, ctx.ownerToken);
    expect(res.status, res.text).toBe(409);
    expect(res.json.errors[0]).toMatchObject({ status: "409", title: "conflict" });
    expect(res.json.errors[0].detail).toContain(firstRunId);
    expect((await runsOf(workspace.id, ctx.ownerToken)).map((r) => r.id)).toEqual([firstRunId]);
  });

  it("409 while a fresh upgrade plan awaits confirmation", async () => {
    const ctx = fromPool();
    const first = await e5(ctx.noCodeModuleId, ctx.workspaceId, ctx.ownerToken);
    expect(first.status).toBe(200);
    const second = await e5(ctx.noCodeModuleId, ctx.workspaceId, ctx.ownerToken, [varEntry("region", "us-east-1")]);
    expect(second.status, second.text).toBe(409);
    expect(
      (await tfe("GET", `runs/${first.json.data.id}`, { token: ctx.ownerToken })).json.data.attributes.status,
    ).toBe("planned");
  });

  it("a stale upgrade plan (a workspace var changed) is discarded and planned afresh", async () => {
    const ctx = fromPool();
    const first = await e5(ctx.noCodeModuleId, ctx.workspaceId, ctx.ownerToken);
    const vars = await tfe("GET", `workspaces/${ctx.workspaceId}/vars`, { token: ctx.ownerToken });
    const created = await tfe("POST", `workspaces/${ctx.workspaceId}/vars`, {
      token: ctx.ownerToken,
      body: { data: { type: "vars", attributes: { key: "region", value: "us-east-1", category: "engine" } } },
    });
    expect(created.status, created.text).toBe(201);
    expect(vars.json.data).toHaveLength(1);
    const second = await e5(ctx.noCodeModuleId, ctx.workspaceId, ctx.ownerToken);
    expect(second.status, second.text).toBe(200);
    expect(second.json.data.id).not.toBe(first.json.data.id);
    expect(
      (await tfe("GET", `runs/${first.json.data.id}`, { token: ctx.ownerToken })).json.data.attributes.status,
    ).toBe("discarded");
    // the new plan sees the new var: random_pet.name updates because of region
    const plan = await tfe("GET", `runs/${second.json.data.id}/plan`, { token: ctx.ownerToken });
    const json = await jsonOutputOf(plan.json.data.id, ctx.ownerToken);
    expect(actionsByAddress(json.json.resource_changes)["random_pet.name"]).toBe("update");
  });

  it("a stale upgrade plan (the pin moved again) is discarded and planned afresh", async () => {
    const ctx = await upgradeReady({ org: pool });
    const first = await e5(ctx.noCodeModuleId, ctx.workspaceId, ctx.ownerToken);
    await patchModule(ctx, { "version-pin": "1.0.0" });
    await patchModule(ctx, {}, [optionEntry("prefix", ["app", "web"])]);
    const second = await e5(ctx.noCodeModuleId, ctx.workspaceId, ctx.ownerToken);
    expect(second.status, second.text).toBe(200);
    expect(
      (await tfe("GET", `runs/${first.json.data.id}`, { token: ctx.ownerToken })).json.data.attributes.status,
    ).toBe("discarded");
  });

  it("concurrent E5s: exactly one plans, the other gets 409", async () => {
    const ctx = fromPool();
    const answers = await Promise.all([0, 1, 2].map(() => e5(ctx.noCodeModuleId, ctx.workspaceId, ctx.ownerToken)));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409]);
    const runs = await runsOf(ctx.workspaceId, ctx.ownerToken);
    expect(runs.filter((r) => r.attributes.status === "planned")).toHaveLength(1);
    expect(runs).toHaveLength(2);
  });
});

describe("E5 refusals (N3, N5, N10)", { timeout: UPGRADE_TEST_TIMEOUT }, () => {
  it("unknown no-code module → 404", async () => {
    const ctx = fromPool();
    const res = await e5(`${ctx.noCodeModuleId}-invalid`, ctx.workspaceId, ctx.ownerToken);
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ errors: [{ status: "404", title: "not found" }] });
  });

  it("unknown workspace → 404; a workspace of another module → 404", async () => {
    const ctx = fromPool();
    expect((await e5(ctx.noCodeModuleId, `${ctx.workspaceId}-invalid`, ctx.ownerToken)).status).toBe(404);
    // a workspace of another module of the organization
    expect((await e5(ctx.noCodeModuleId, samePinWorkspaces[3]!.workspace.id, ctx.ownerToken)).status).toBe(404);
  });

  it("N3: a disabled module → 422", async () => {
    const ctx = await upgradeReady({ org: pool });
    await patchModule(ctx, { enabled: false });
    const res = await e5(ctx.noCodeModuleId, ctx.workspaceId, ctx.ownerToken);
    expect(res.status).toBe(422);
    expect(res.json.errors[0].title).toBe("unprocessable entity");
  });

  it("N5: a value outside the variable's options → 422, and nothing is created", async () => {
    const ctx = await upgradeModule({ org: pool, options: [optionEntry("region", ["eu-west-1", "us-east-1"])] });
    const { workspace, firstRunId } = await upgradeWorkspace(ctx);
    await patchModule(ctx, { "version-pin": "1.1.0" });
    const res = await e5(ctx.noCodeModuleId, workspace.id, ctx.ownerToken, [varEntry("region", "mars-north-1")]);
    expect(res.status).toBe(422);
    expect(res.json.errors[0].detail).toContain('"region"');
    expect((await runsOf(workspace.id, ctx.ownerToken)).map((r) => r.id)).toEqual([firstRunId]);
  });

  it("N10: manage-workspaces members and team tokens may; read-only members and the organization token get 404; no token 401", async () => {
    const ctx = fromPool();
    const orgToken = await createOrgToken(ctx.org);
    const reader = await createMember(ctx.org, { "read-workspaces": true });
    const modules = await createMember(ctx.org, { "manage-modules": true });
    for (const token of [orgToken, reader.token, modules.token]) {
      const res = await e5(ctx.noCodeModuleId, ctx.workspaceId, token);
      expect(res.status).toBe(404);
    }
    expect((await e5(ctx.noCodeModuleId, ctx.workspaceId, null as unknown as string)).status).toBe(401);
    expect(await runsOf(ctx.workspaceId, ctx.ownerToken)).toHaveLength(1);
    const manager = await createMember(ctx.org, { "manage-workspaces": true });
    expect((await e5(ctx.noCodeModuleId, ctx.workspaceId, manager.token)).status).toBe(200);

    const other = fromPool();
    const teamToken = await createTeamToken(await createTeam(ctx.org, { "manage-workspaces": true }));
    expect((await e5(other.noCodeModuleId, other.workspaceId, teamToken)).status).toBe(200);
  });
});
