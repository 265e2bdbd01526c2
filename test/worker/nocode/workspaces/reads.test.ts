/**
 * Workspace reads, `GET /workspaces/:id` and `GET /organizations/:org/workspaces/:name`
 * (decisions N10; HCP Terraform's workspace document): the full document, who may read it and what the
 * permissions say, and the 404s. Creating one (E4): e4-workspaces.test.ts.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { ADMIN, bootstrapOrg, createMember, createOrgToken, tfe } from "../../../helpers/nocode";
import { createNoCodeWorkspace, type NoCodeOrg, noCodeOrg, optionEntry } from "../../../helpers/nocode-modules";

let ctx: NoCodeOrg;
beforeAll(async () => {
  ctx = await noCodeOrg({ options: [optionEntry("length", ["2", "3"], "number")] });
});

describe("GET /workspaces/:id and /organizations/:org/workspaces/:name", () => {
  it("returns the full workspace document of HCP Terraform's workspace document", async () => {
    const { workspace } = await createNoCodeWorkspace(ctx.noCodeModuleId, ctx.ownerToken, {
      description: "self-service",
    });
    const res = await tfe("GET", `workspaces/${workspace.id}`, { token: ctx.ownerToken });
    expect(res.status).toBe(200);
    const d = res.json.data;
    expect(d.type).toBe("workspaces");
    expect(d.id).toMatch(/^ws-[A-Za-z0-9]{16}$/);
    const booleans = [
      "allow-destroy-plan",
      "auto-apply",
      "locked",
      "queue-all-runs",
      "speculative-enabled",
      "structured-run-output-enabled",
      "global-remote-state",
      "operations",
      "file-triggers-enabled",
      "assessments-enabled",
      "no-code-upgrade-available",
    ];
    for (const key of booleans) expect(typeof d.attributes[key], key).toBe("boolean");
    const nullable = [
      "auto-destroy-at",
      "auto-destroy-status",
      "working-directory",
      "vcs-repo",
      "vcs-repo-identifier",
      "apply-duration-average",
      "plan-duration-average",
      "policy-check-failures",
      "run-failures",
      "workspace-kpis-runs-count",
      "last-assessment-result-at",
      "source-name",
      "source-url",
    ];
    for (const key of nullable) expect(d.attributes, key).toHaveProperty(key, null);
    for (const key of ["created-at", "updated-at", "latest-change-at"])
      expect(d.attributes[key]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    for (const key of ["environment", "name", "engine-version", "execution-mode", "source", "source-module-id"])
      expect(typeof d.attributes[key], key).toBe("string");
    expect(d.attributes.description).toBe("self-service");
    expect(d.attributes["resource-count"]).toBe(0);
    for (const key of ["trigger-prefixes", "trigger-patterns", "tag-names"]) expect(d.attributes[key]).toEqual([]);
    expect(Object.keys(d.attributes.permissions).sort()).toEqual(
      [
        "can-update",
        "can-destroy",
        "can-queue-run",
        "can-read-run",
        "can-read-variable",
        "can-update-variable",
        "can-read-state-versions",
        "can-read-state-outputs",
        "can-create-state-versions",
        "can-queue-apply",
        "can-lock",
        "can-unlock",
        "can-force-unlock",
        "can-read-settings",
        "can-manage-tags",
        "can-manage-run-tasks",
        "can-force-delete",
        "can-manage-assessments",
        "can-manage-ephemeral-workspaces",
        "can-read-assessment-results",
        "can-queue-destroy",
      ].sort(),
    );
    expect(d.attributes.actions).toEqual({ "is-destroyable": true });
    expect(d.attributes["setting-overwrites"]).toEqual({ "execution-mode": false, "agent-pool": false });
    expect(Object.keys(d.relationships)).toEqual([
      "organization",
      "current-run",
      "latest-run",
      "outputs",
      "remote-state-consumers",
      "current-state-version",
      "current-configuration-version",
      "agent-pool",
      "readme",
      "project",
      "current-assessment-result",
      "no-code-module-version",
      "vars",
      // N20: who holds the lock (null when unlocked).
      "locked-by",
    ]);
    expect(d.relationships["current-configuration-version"].data.id).toMatch(/^cv-/);
    expect(d.relationships["remote-state-consumers"].links.related).toBe(
      `/api/v2/workspaces/${d.id}/relationships/remote-state-consumers`,
    );
    expect(d.relationships.vars.data).toHaveLength(1);
    expect(d.links).toEqual({
      self: `/api/v2/organizations/${ctx.org}/workspaces/${d.attributes.name}`,
      "self-html": `/app/${ctx.org}/workspaces/${d.attributes.name}`,
    });
  });

  it("read-workspaces callers and the organization token read; permissions reflect the caller (N10)", async () => {
    const { workspace } = await createNoCodeWorkspace(ctx.noCodeModuleId, ctx.ownerToken);
    const reader = await createMember(ctx.org, { "read-workspaces": true });
    const asReader = await tfe("GET", `workspaces/${workspace.id}`, { token: reader.token });
    expect(asReader.status).toBe(200);
    expect(asReader.json.data.attributes.permissions).toMatchObject({
      "can-update": false,
      "can-queue-run": false,
      "can-read-variable": true,
      "can-update-variable": false,
    });
    const asOrg = await tfe("GET", `organizations/${ctx.org}/workspaces/${workspace.attributes.name}`, {
      token: await createOrgToken(ctx.org),
    });
    expect(asOrg.status).toBe(200);
    expect(asOrg.json.data.attributes.permissions).toMatchObject({
      "can-update": true,
      "can-update-variable": true,
      "can-queue-run": false,
      "can-queue-apply": false,
    });
    const asOwner = await tfe("GET", `workspaces/${workspace.id}`, { token: ctx.ownerToken });
    expect(asOwner.json.data.attributes.permissions["can-queue-run"]).toBe(true);
  });

  it("plain members, outsiders and ADMIN_TOKEN get 404; unknown names and ids are 404", async () => {
    const { workspace } = await createNoCodeWorkspace(ctx.noCodeModuleId, ctx.ownerToken);
    const member = await createMember(ctx.org, {});
    for (const token of [member.token, ADMIN, (await bootstrapOrg()).ownerToken]) {
      expect((await tfe("GET", `workspaces/${workspace.id}`, { token })).status).toBe(404);
      expect(
        (await tfe("GET", `organizations/${ctx.org}/workspaces/${workspace.attributes.name}`, { token })).status,
      ).toBe(404);
    }
    expect((await tfe("GET", "workspaces/ws-AAAAAAAAAAAAAAAA", { token: ctx.ownerToken })).status).toBe(404);
    expect((await tfe("GET", `organizations/${ctx.org}/workspaces/nope`, { token: ctx.ownerToken })).status).toBe(404);
  });
});
