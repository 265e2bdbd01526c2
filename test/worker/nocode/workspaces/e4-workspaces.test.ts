/**
 * E4 `POST /no-code-modules/:id/workspaces` (decisions N1, N3, N5, N6, N8, N10, N12; HCP
 * Terraform's no-code provisioning API (E4), HCP Terraform's agent pools API, HCP
 * Terraform's workspace rules; go-tfe's and the tfe provider's tests). Every refusal is
 * checked to create nothing. Reading a workspace: reads.test.ts.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import {
  ADMIN,
  bootstrapOrg,
  createMember,
  createOrgToken,
  createTeam,
  createTeamToken,
  tfe,
  uniqueName,
} from "../../../helpers/nocode";
import {
  createPendingVersion,
  createRegistryModule,
  enableNoCode,
  type NoCodeOrg,
  noCodeModuleDoc,
  noCodeOrg,
  optionEntry,
  provisionWorkspace,
  publishVersion,
  uploadVersion,
  varEntry,
  workspaceDoc,
} from "../../../helpers/nocode-modules";

let ctx: NoCodeOrg;
beforeAll(async () => {
  ctx = await noCodeOrg({ options: [optionEntry("length", ["2", "3"], "number")] });
});

/** Workspaces and runs stored for an organization (D1): a refused E4 must leave both unchanged. */
async function stored(org: string): Promise<{ workspaces: number; runs: number; vars: number }> {
  const ws = await env.DB.prepare("SELECT count(*) AS n FROM workspaces WHERE organization = ?")
    .bind(org)
    .first<{ n: number }>();
  const runs = await env.DB.prepare("SELECT count(*) AS n FROM runs WHERE organization = ?")
    .bind(org)
    .first<{ n: number }>();
  const vars = await env.DB.prepare(
    "SELECT count(*) AS n FROM workspace_vars WHERE workspace_id IN (SELECT id FROM workspaces WHERE organization = ?)",
  )
    .bind(org)
    .first<{ n: number }>();
  return { workspaces: ws?.n ?? 0, runs: runs?.n ?? 0, vars: vars?.n ?? 0 };
}

/** E4 with the required `prefix` and a unique name, plus `attributes`. */
function create(
  attributes: Record<string, unknown> = {},
  vars = [varEntry("prefix", "pet")],
  relationships: Record<string, unknown> = {},
  token = ctx.ownerToken,
  moduleId = ctx.noCodeModuleId,
) {
  return provisionWorkspace(
    moduleId,
    token,
    workspaceDoc({ name: uniqueName("ws"), ...attributes }, vars, relationships),
  );
}

/** Expect a 422 whose first error has `detail` (and `pointer` when given), and that nothing was stored. */
async function expectRefused(
  answer: Promise<{ status: number; json: { errors: { detail?: string; source?: { pointer: string } }[] } }>,
  detail: string | RegExp,
  pointer?: string,
  org = ctx.org,
) {
  const before = await stored(org);
  const res = await answer;
  expect(res.status, JSON.stringify(res.json)).toBe(422);
  const first = res.json.errors[0]!;
  if (typeof detail === "string") expect(first.detail).toBe(detail);
  else expect(first.detail).toMatch(detail);
  if (pointer) expect(first.source?.pointer).toBe(pointer);
  expect(await stored(org)).toEqual(before);
  return res;
}

describe("E4 as go-tfe's and the tfe provider's tests use it", () => {
  it("name, source-name, source-url and execution-mode are echoed; source-module-id is the same when read by name", async () => {
    const name = `foo-${crypto.randomUUID().slice(0, 8)}`;
    const res = await create({
      name,
      "source-name": "my-app",
      "source-url": "http://my-app.com",
      "execution-mode": "remote",
    });
    expect(res.status).toBe(200);
    const a = res.json.data.attributes;
    expect(a).toMatchObject({
      name,
      "source-name": "my-app",
      "source-url": "http://my-app.com",
      "execution-mode": "remote",
    });
    expect(a["source-module-id"]).toBe(
      `private/${ctx.org}/${ctx.registryModule.name}/${ctx.registryModule.provider}/1.0.0`,
    );
    const byName = await tfe("GET", `organizations/${ctx.org}/workspaces/${name}`, { token: ctx.ownerToken });
    expect(byName.status).toBe(200);
    expect(byName.json.data.id).toBe(res.json.data.id);
    expect(byName.json.data.attributes["source-module-id"]).toBe(a["source-module-id"]);
  });

  it("an unknown no-code module (codeno-abc123XYZ) → 404", async () => {
    const res = await provisionWorkspace(
      "codeno-abc123XYZ",
      ctx.ownerToken,
      workspaceDoc({ name: uniqueName("ws") }, [varEntry("prefix", "p")]),
    );
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ errors: [{ status: "404", title: "not found" }] });
  });

  it("terraform-version 1.3.0 → echoed as terraform-version (and engine-version, N6)", async () => {
    const res = await create({ "terraform-version": "1.3.0" });
    expect(res.status).toBe(200);
    expect(res.json.data.attributes["terraform-version"]).toBe("1.3.0");
    expect(res.json.data.attributes["engine-version"]).toBe("1.3.0");
    const run = await tfe("GET", `runs/${res.json.data.relationships["latest-run"].data.id}`, {
      token: ctx.ownerToken,
    });
    expect(run.json.data.attributes["engine-version"]).toBe("1.3.0");
  });

  it("source tfe-module, no-code-upgrade-available false, a no-code-module-version, the default project when omitted", async () => {
    const res = await create();
    expect(res.status).toBe(200);
    const d = res.json.data;
    expect(d.attributes.source).toBe("tfe-module");
    expect(d.attributes["no-code-upgrade-available"]).toBe(false);
    expect(d.relationships["no-code-module-version"].data).toEqual({
      id: expect.stringMatching(/^nocodever-[A-Za-z0-9]{16}$/),
      type: "no-code-module-versions",
    });
    expect(d.relationships.project.data).toEqual({ id: ctx.defaultProjectId, type: "projects" });
    // The same module version gives every workspace the same no-code-module-version id.
    const again = await create();
    expect(again.json.data.relationships["no-code-module-version"].data.id).toBe(
      d.relationships["no-code-module-version"].data.id,
    );
  });

  it("the requested project (typed project or projects, N1)", async () => {
    const project = await tfe("POST", `organizations/${ctx.org}/projects`, {
      token: ctx.ownerToken,
      body: { data: { type: "projects", attributes: { name: uniqueName("proj") } } },
    });
    for (const type of ["project", "projects"]) {
      const res = await create({}, [varEntry("prefix", "p")], {
        project: { data: { type, id: project.json.data.id } },
      });
      expect(res.status).toBe(200);
      expect(res.json.data.relationships.project.data).toEqual({ id: project.json.data.id, type: "projects" });
    }
  });

  it("a name already used in the organization → 422 invalid attribute `Name has already been taken`", async () => {
    const first = await create();
    const name = first.json.data.attributes.name;
    const res = await expectRefused(create({ name }), "Name has already been taken", "/data/attributes/name");
    expect(res.json.errors[0]).toEqual({
      status: "422",
      title: "invalid attribute",
      detail: "Name has already been taken",
      source: { pointer: "/data/attributes/name" },
    });
    // Names are unique per organization only.
    const other = await noCodeOrg();
    expect(
      (
        await provisionWorkspace(
          other.noCodeModuleId,
          other.ownerToken,
          workspaceDoc({ name }, [varEntry("prefix", "p")]),
        )
      ).status,
    ).toBe(200);
  });

  it("names with illegal characters, empty or over 260 characters → 422 (N6); 260 is fine", async () => {
    for (const name of ["has space", "a/b", "dot.name", "ünï", ""]) {
      await expectRefused(create({ name }), /^Name (may only contain|can't be blank)/, "/data/attributes/name");
    }
    await expectRefused(
      create({ name: "a".repeat(261) }),
      "Name is too long (maximum is 260 characters)",
      "/data/attributes/name",
    );
    const longest = `${"a".repeat(250)}${crypto.randomUUID().slice(0, 10)}`;
    expect(longest).toHaveLength(260);
    expect((await create({ name: longest })).status).toBe(200);
  });

  it("agent-pool rules (HCP Terraform's agent pools API and error texts)", async () => {
    const pool = await tfe("POST", `organizations/${ctx.org}/agent-pools`, {
      token: ctx.ownerToken,
      body: { data: { type: "agent-pools", attributes: { name: uniqueName("pool") } } },
    });
    const poolId = pool.json.data.id;
    await expectRefused(
      create({ "execution-mode": "agent" }),
      "Agent pool must be specified when using 'agent' execution mode",
      "/data/attributes/agent-pool-id",
    );
    const remote = await expectRefused(
      create({ "execution-mode": "remote", "agent-pool-id": poolId }),
      "Agent pool must not be specified unless using 'agent' execution mode",
    );
    expect(remote.json.errors[0]).toMatchObject({ title: "unprocessable entity" });
    await expectRefused(
      create({ "agent-pool-id": poolId }),
      "Agent pool must not be specified unless using 'agent' execution mode",
    );
    const foreign = await bootstrapOrg();
    const foreignPool = await tfe("POST", `organizations/${foreign.org}/agent-pools`, {
      token: foreign.ownerToken,
      body: { data: { type: "agent-pools", attributes: { name: uniqueName("pool") } } },
    });
    await expectRefused(
      create({ "execution-mode": "agent", "agent-pool-id": foreignPool.json.data.id }),
      /^Agent pool must be an agent pool of/,
      "/data/attributes/agent-pool-id",
    );
    await expectRefused(
      create({ "execution-mode": "local" }),
      /^Execution mode must be/,
      "/data/attributes/execution-mode",
    );

    const ok = await create({ "execution-mode": "agent", "agent-pool-id": poolId });
    expect(ok.status).toBe(200);
    expect(ok.json.data.attributes["execution-mode"]).toBe("agent");
    expect(ok.json.data.attributes["setting-overwrites"]).toEqual({ "execution-mode": true, "agent-pool": true });
    expect(ok.json.data.relationships["agent-pool"].data).toEqual({ id: poolId, type: "agent-pools" });
  });

  it("a pool that is not organization-scoped serves only its allowed projects", async () => {
    const project = await tfe("POST", `organizations/${ctx.org}/projects`, {
      token: ctx.ownerToken,
      body: { data: { type: "projects", attributes: { name: uniqueName("proj") } } },
    });
    const pool = await tfe("POST", `organizations/${ctx.org}/agent-pools`, {
      token: ctx.ownerToken,
      body: {
        data: {
          type: "agent-pools",
          attributes: { name: uniqueName("pool"), "organization-scoped": false },
          relationships: { "allowed-projects": { data: [{ type: "projects", id: project.json.data.id }] } },
        },
      },
    });
    const attrs = { "execution-mode": "agent", "agent-pool-id": pool.json.data.id };
    await expectRefused(
      create(attrs),
      "Agent pool is not available to the workspace's project",
      "/data/attributes/agent-pool-id",
    );
    const ok = await create(attrs, [varEntry("prefix", "p")], {
      project: { data: { type: "projects", id: project.json.data.id } },
    });
    expect(ok.status).toBe(200);
  });

  it("data.type no-code-module-workspace (go-tfe) is accepted; auto-apply and auto_apply are both honoured", async () => {
    const goTfe = await provisionWorkspace(
      ctx.noCodeModuleId,
      ctx.ownerToken,
      workspaceDoc(
        { name: uniqueName("ws"), "auto-apply": true },
        [varEntry("prefix", "p", { "version-id": "", description: "" })],
        {},
        "no-code-module-workspace",
      ),
    );
    expect(goTfe.status).toBe(200);
    expect(goTfe.json.data.attributes["auto-apply"]).toBe(true);
    const pytfe = await create({ auto_apply: true });
    expect(pytfe.json.data.attributes["auto-apply"]).toBe(true);
    const neither = await create();
    expect(neither.json.data.attributes["auto-apply"]).toBe(false);
    await expectRefused(
      provisionWorkspace(
        ctx.noCodeModuleId,
        ctx.ownerToken,
        workspaceDoc({ name: uniqueName("ws") }, [varEntry("prefix", "p")], {}, "registry-modules"),
      ),
      'data.type must be "workspaces"',
      "/data/type",
    );
  });
});

describe("E4 refusals: 422 with a clear detail, nothing created", () => {
  it("a value outside a variable's options (N5)", async () => {
    await expectRefused(
      create({}, [varEntry("prefix", "p"), varEntry("length", "7")]),
      'Value of variable "length" must be one of the allowed options: "2", "3"',
    );
    // Inside them it works, also as an HCL number.
    expect((await create({}, [varEntry("prefix", "p"), varEntry("length", "3")])).status).toBe(200);
    expect((await create({}, [varEntry("prefix", "p"), varEntry("length", "2", { hcl: true })])).status).toBe(200);
    // An env var of that name is not a module variable.
    expect((await create({}, [varEntry("prefix", "p"), varEntry("length", "7", { category: "env" })])).status).toBe(
      200,
    );
  });

  it("a missing required variable (N5)", async () => {
    await expectRefused(
      create({}, [varEntry("length", "2")]),
      'Missing required variable "prefix": module version 1.0.0 declares no default, so a value must be given',
    );
    await expectRefused(
      create({}, [varEntry("prefix", "p", { category: "env" })]),
      /^Missing required variable "prefix"/,
    );
  });

  it("an unknown or unsatisfiable engine version (N6), under the attribute that was sent", async () => {
    await expectRefused(
      create({ "engine-version": "9.9.9" }),
      "Engine version 9.9.9 is not an available release",
      "/data/attributes/engine-version",
    );
    await expectRefused(
      create({ "terraform-version": "nonexisting" }),
      /is not a valid engine version/,
      "/data/attributes/terraform-version",
    );
    await expectRefused(
      create({ "engine-version": "~> 0.11.0" }),
      /^No available engine release satisfies the constraint "~> 0.11.0"/,
      "/data/attributes/engine-version",
    );
  });

  it("a constraint is echoed and each run uses the newest matching release (N6)", async () => {
    const res = await create({ "engine-version": "~> 1.5.0" });
    expect(res.status).toBe(200);
    expect(res.json.data.attributes["engine-version"]).toBe("~> 1.5.0");
    const run = await tfe("GET", `runs/${res.json.data.relationships["latest-run"].data.id}`, {
      token: ctx.ownerToken,
    });
    expect(run.json.data.attributes["terraform-version"]).toBe("1.5.7");
    // Omitted: the newest release, echoed as that version.
    const latest = await create();
    expect(latest.json.data.attributes["engine-version"]).toMatch(/^1\.\d+\.\d+$/);
  });

  it("a disabled module (N3)", async () => {
    const disabled = await noCodeOrg({ enabled: false, org: ctx });
    await expectRefused(
      create({}, [varEntry("prefix", "p")], {}, ctx.ownerToken, disabled.noCodeModuleId),
      /^The no-code module is not enabled/,
    );
  });

  it("a pin that is not ingested: pending, failed, or none at all (N3)", async () => {
    const pendingMod = await createRegistryModule(ctx.org, ctx.ownerToken);
    await createPendingVersion(ctx.org, pendingMod, "1.0.0", ctx.ownerToken);
    const pending = await enableNoCode(
      ctx.org,
      ctx.ownerToken,
      noCodeModuleDoc(pendingMod.id, { enabled: true, "version-pin": "1.0.0" }),
    );
    await expectRefused(
      create({}, [varEntry("prefix", "p")], {}, ctx.ownerToken, pending.json.data.id),
      "The pinned version 1.0.0 is pending, not yet ingested; only an ok version can be provisioned",
    );

    const failedMod = await createRegistryModule(ctx.org, ctx.ownerToken);
    expect(
      (await publishVersion(ctx.org, failedMod, "1.0.0", ctx.ownerToken, { "README.md": "no terraform here" })).status,
    ).toBe("reg_ingress_failed");
    const failed = await enableNoCode(
      ctx.org,
      ctx.ownerToken,
      noCodeModuleDoc(failedMod.id, { enabled: true, "version-pin": "1.0.0" }),
    );
    await expectRefused(
      create({}, [varEntry("prefix", "p")], {}, ctx.ownerToken, failed.json.data.id),
      /^The pinned version 1\.0\.0 failed ingestion: /,
    );

    const emptyMod = await createRegistryModule(ctx.org, ctx.ownerToken);
    const none = await enableNoCode(ctx.org, ctx.ownerToken, noCodeModuleDoc(emptyMod.id, { enabled: true }));
    await expectRefused(
      create({}, [varEntry("prefix", "p")], {}, ctx.ownerToken, none.json.data.id),
      /^The no-code module has no version pin/,
    );
  });

  it("a pinned version that became ok but fails N12", async () => {
    const mod = await createRegistryModule(ctx.org, ctx.ownerToken, { provider: "null" });
    const pending = await createPendingVersion(ctx.org, mod, "1.0.0", ctx.ownerToken);
    const e1 = await enableNoCode(
      ctx.org,
      ctx.ownerToken,
      noCodeModuleDoc(mod.id, { enabled: true, "version-pin": "1.0.0" }),
    );
    const ingested = await uploadVersion(ctx.org, mod, "1.0.0", pending.upload, ctx.ownerToken, {
      "main.tf": 'resource "null_resource" "x" {}\n',
    });
    expect(ingested.status).toBe("ok");
    await expectRefused(
      create({}, [], {}, ctx.ownerToken, e1.json.data.id),
      "Module version 1.0.0 does not meet the no-code design requirements: it declares no provider (no required_providers entry and no provider block).",
    );
  });

  it("with several faults at once, the first check in E4's order decides: project, agent pool, module, engine, name, vars", async () => {
    // E4 reads what it checks from the per-isolate cache, and the name only on a var error
    // or from the UNIQUE index; the checks must still run in this order.
    const other = await bootstrapOrg();
    const taken = (await create()).json.data.attributes.name as string;
    const foreignProject = { project: { data: { type: "projects", id: other.defaultProjectId } } };
    const badVars = [varEntry("prefix", "p"), varEntry("length", "7")];
    const disabled = await noCodeOrg({ enabled: false, org: ctx });
    const all = { name: taken, "execution-mode": "agent", "engine-version": "9.9.9" };
    const attempt = (
      attributes: Record<string, unknown>,
      relationships: Record<string, unknown> = {},
      moduleId = ctx.noCodeModuleId,
    ) => provisionWorkspace(moduleId, ctx.ownerToken, workspaceDoc(attributes, badVars, relationships));

    await expectRefused(
      attempt(all, foreignProject, disabled.noCodeModuleId),
      "Project must be a project of the workspace's organization",
      "/data/relationships/project",
    );
    await expectRefused(
      attempt(all, {}, disabled.noCodeModuleId),
      "Agent pool must be specified when using 'agent' execution mode",
      "/data/attributes/agent-pool-id",
    );
    const { "execution-mode": _mode, ...noPool } = all;
    await expectRefused(attempt(noPool, {}, disabled.noCodeModuleId), /^The no-code module is not enabled/);
    await expectRefused(
      attempt(noPool),
      "Engine version 9.9.9 is not an available release",
      "/data/attributes/engine-version",
    );
    const { "engine-version": _engine, ...nameAndVars } = noPool;
    await expectRefused(attempt(nameAndVars), "Name has already been taken", "/data/attributes/name");
    await expectRefused(
      attempt({ name: uniqueName("ws") }),
      'Value of variable "length" must be one of the allowed options: "2", "3"',
    );
  });

  it("a project of another organization; duplicate var keys; malformed vars", async () => {
    const other = await bootstrapOrg();
    await expectRefused(
      create({}, [varEntry("prefix", "p")], { project: { data: { type: "projects", id: other.defaultProjectId } } }),
      "Project must be a project of the workspace's organization",
      "/data/relationships/project",
    );
    await expectRefused(
      create({}, [varEntry("prefix", "p"), varEntry("prefix", "q", { category: "terraform" })]),
      "Key has already been taken",
      "/data/relationships/vars/data/1/attributes/key",
    );
    await expectRefused(
      create({}, [varEntry("prefix", "p", { category: "weird" })]),
      /^Category must be/,
      "/data/relationships/vars/data/0/attributes/category",
    );
    await expectRefused(
      create({}, [varEntry("prefix", 3 as unknown as string)]),
      "Value must be a string",
      "/data/relationships/vars/data/0/attributes/value",
    );
    await expectRefused(create({ description: 5 }), /must be a string/, "/data/attributes/description");
  });
});

describe("E4 permissions (N10)", () => {
  it("the organization token, read-only members, ADMIN_TOKEN and outsiders get 404 and create nothing", async () => {
    const reader = await createMember(ctx.org, { "read-workspaces": true, "manage-modules": true });
    for (const token of [await createOrgToken(ctx.org), reader.token, ADMIN, (await bootstrapOrg()).ownerToken]) {
      const before = await stored(ctx.org);
      const res = await create({}, [varEntry("prefix", "p")], {}, token);
      expect(res.status).toBe(404);
      expect(res.json).toEqual({ errors: [{ status: "404", title: "not found" }] });
      expect(await stored(ctx.org)).toEqual(before);
    }
  });

  it("manage-workspaces users and team tokens may create", async () => {
    const manager = await createMember(ctx.org, { "manage-workspaces": true });
    const team = await createTeamToken(await createTeam(ctx.org, { "manage-workspaces": true }));
    for (const token of [manager.token, team])
      expect((await create({}, [varEntry("prefix", "p")], {}, token)).status).toBe(200);
  });
});

describe("E4 concurrency (N6)", () => {
  it("concurrent creates of one name give exactly one workspace; the others 422 `Name has already been taken`", async () => {
    const name = uniqueName("race");
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        provisionWorkspace(ctx.noCodeModuleId, ctx.ownerToken, workspaceDoc({ name }, [varEntry("prefix", "p")])),
      ),
    );
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([200, 422, 422, 422, 422, 422]);
    for (const a of answers.filter((x) => x.status === 422))
      expect(a.json.errors[0].detail).toBe("Name has already been taken");
    const rows = await env.DB.prepare("SELECT id FROM workspaces WHERE organization = ? AND name = ?")
      .bind(ctx.org, name)
      .all<{ id: string }>();
    expect(rows.results).toHaveLength(1);
    // Only the winner has vars and a run.
    const orphans = await env.DB.prepare(
      "SELECT count(*) AS n FROM runs WHERE organization = ? AND workspace_id NOT IN (SELECT id FROM workspaces)",
    )
      .bind(ctx.org)
      .first<{ n: number }>();
    expect(orphans?.n).toBe(0);
  });
});
