/**
 * E3 `GET /no-code-modules/:id` with `include`, `DELETE /no-code-modules/:id`, the module
 * variables of a version (N9), and the registry-module list with
 * `include=no-code-modules` (HCP Terraform's no-code provisioning API; go-tfe's and the tfe provider's tests).
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import {
  ADMIN,
  type BootstrappedOrg,
  bootstrapOrg,
  createMember,
  createOrgToken,
  createUser,
  tfe,
  uniqueName,
} from "../../../helpers/nocode";
import {
  createNoCodeWorkspace,
  createRegistryModule,
  enableNoCode,
  noCodeModuleDoc,
  noCodeOrg,
  optionEntry,
  publishVersion,
} from "../../../helpers/nocode-modules";

let ctx: BootstrappedOrg;
beforeAll(async () => {
  ctx = await bootstrapOrg();
});

/** A no-code module with two option sets; returns its E1 answer's data. */
async function moduleWithOptions() {
  const mod = await createRegistryModule(ctx.org, ctx.ownerToken);
  const res = await enableNoCode(
    ctx.org,
    ctx.ownerToken,
    noCodeModuleDoc(mod.id, { enabled: true }, [
      optionEntry("var1", ["option1", "option2"]),
      optionEntry("my_var", ["my_option1", "my_option2"]),
    ]),
  );
  expect(res.status).toBe(200);
  return { mod, data: res.json.data };
}

describe("E3 as go-tfe's and the tfe provider's tests use it", () => {
  it("read without include → the same document as E1, no `included`", async () => {
    const { data } = await moduleWithOptions();
    const res = await tfe("GET", `no-code-modules/${data.id}`, { token: ctx.ownerToken });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ data });
  });

  it("include=variable-options and include=variable_options → both sets in creation order, as sent", async () => {
    const { data } = await moduleWithOptions();
    for (const include of ["variable-options", "variable_options"]) {
      const res = await tfe("GET", `no-code-modules/${data.id}?include=${include}`, { token: ctx.ownerToken });
      expect(res.status).toBe(200);
      expect(res.json.data).toEqual(data);
      const [first, second] = data.relationships["variable-options"].data;
      expect(res.json.included).toEqual([
        {
          id: first.id,
          type: "variable-options",
          attributes: { "variable-name": "var1", "variable-type": "string", options: ["option1", "option2"] },
          relationships: { "no-code-allowed-module": { data: { id: data.id, type: "no-code-allowed-modules" } } },
        },
        {
          id: second.id,
          type: "variable-options",
          attributes: { "variable-name": "my_var", "variable-type": "string", options: ["my_option1", "my_option2"] },
          relationships: { "no-code-allowed-module": { data: { id: data.id, type: "no-code-allowed-modules" } } },
        },
      ]);
    }
  });

  it("an unknown id (`non-existing`) → 404 not found", async () => {
    const res = await tfe("GET", "no-code-modules/non-existing", { token: ctx.ownerToken });
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ errors: [{ status: "404", title: "not found" }] });
  });

  it("include=bogus → 400 bad request / Invalid include parameter, naming the parameter (docs/api-v2-errors.md)", async () => {
    const { data } = await moduleWithOptions();
    const res = await tfe("GET", `no-code-modules/${data.id}?include=bogus`, { token: ctx.ownerToken });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({
      errors: [
        { status: "400", title: "bad request", detail: "Invalid include parameter", source: { parameter: "include" } },
      ],
    });
  });

  it("read-back carries enabled, version-pin, organization, registry-module and options to re-create an identical module", async () => {
    const org = await noCodeOrg({ options: [optionEntry("length", ["2", "3"], "number")] });
    const read = await tfe("GET", `no-code-modules/${org.noCodeModuleId}?include=variable_options`, {
      token: org.ownerToken,
    });
    const d = read.json.data;
    expect(d.attributes).toEqual({ enabled: true, "version-pin": "1.0.0" });
    expect(d.relationships.organization.data.id).toBe(org.org);
    expect(d.relationships["registry-module"].data.id).toBe(org.registryModule.id);
    const options = read.json.included.map((o: { attributes: Record<string, unknown> }) => o.attributes);
    // Re-create from what was read, after deleting: the same document comes back.
    expect((await tfe("DELETE", `no-code-modules/${d.id}`, { token: org.ownerToken })).status).toBe(204);
    const again = await enableNoCode(
      org.org,
      org.ownerToken,
      noCodeModuleDoc(
        d.relationships["registry-module"].data.id,
        d.attributes,
        options.map((o: Record<string, unknown>) => ({ type: "variable-options", attributes: o })),
      ),
    );
    expect(again.status).toBe(200);
    expect(again.json.data.attributes).toEqual(d.attributes);
    const reread = await tfe("GET", `no-code-modules/${again.json.data.id}?include=variable_options`, {
      token: org.ownerToken,
    });
    expect(reread.json.included.map((o: { attributes: unknown }) => o.attributes)).toEqual(options);
  });
});

describe("E3 permissions (N10)", () => {
  it("any member and the organization token read; ADMIN_TOKEN, non-members and other organizations get 404", async () => {
    const { data } = await moduleWithOptions();
    const member = await createMember(ctx.org, {});
    for (const token of [member.token, await createOrgToken(ctx.org)]) {
      expect((await tfe("GET", `no-code-modules/${data.id}`, { token })).status).toBe(200);
    }
    for (const token of [ADMIN, (await createUser()).token, (await bootstrapOrg()).ownerToken]) {
      expect((await tfe("GET", `no-code-modules/${data.id}`, { token })).status).toBe(404);
    }
  });
});

describe("DELETE /no-code-modules/:id", () => {
  it("deletes (204, empty body); then E3 is 404, the registry module has no no-code module and `no-code` false", async () => {
    const { mod, data } = await moduleWithOptions();
    const del = await tfe("DELETE", `no-code-modules/${data.id}`, { token: ctx.ownerToken });
    expect(del.status).toBe(204);
    expect(del.text).toBe("");
    expect((await tfe("GET", `no-code-modules/${data.id}`, { token: ctx.ownerToken })).status).toBe(404);
    const read = await tfe("GET", `registry-modules/${mod.id}`, { token: ctx.ownerToken });
    expect(read.json.data.attributes["no-code"]).toBe(false);
    expect(read.json.data.relationships["no-code-modules"].data).toEqual([]);
    const options = await env.DB.prepare("SELECT count(*) AS n FROM variable_options WHERE no_code_module_id = ?")
      .bind(data.id)
      .first<{ n: number }>();
    expect(options?.n).toBe(0);
    // The registry module can be enabled again.
    expect((await enableNoCode(ctx.org, ctx.ownerToken, noCodeModuleDoc(mod.id))).status).toBe(200);
  });

  it("DELETE of id `invalid` → 404", async () => {
    const res = await tfe("DELETE", "no-code-modules/invalid", { token: ctx.ownerToken });
    expect(res.status).toBe(404);
  });

  it("needs manage-modules (a workspace manager and ADMIN_TOKEN are refused and nothing is deleted)", async () => {
    const { data } = await moduleWithOptions();
    const workspaceManager = await createMember(ctx.org, { "manage-workspaces": true });
    for (const token of [workspaceManager.token, ADMIN]) {
      expect((await tfe("DELETE", `no-code-modules/${data.id}`, { token })).status).toBe(404);
    }
    expect((await tfe("GET", `no-code-modules/${data.id}`, { token: ctx.ownerToken })).status).toBe(200);
  });

  it("N10, N10a: the organization token may DELETE a no-code module", async () => {
    const { data } = await moduleWithOptions();
    expect((await tfe("DELETE", `no-code-modules/${data.id}`, { token: await createOrgToken(ctx.org) })).status).toBe(
      204,
    );
    expect((await tfe("GET", `no-code-modules/${data.id}`, { token: ctx.ownerToken })).status).toBe(404);
  });

  it("workspaces provisioned from a deleted module stay, with their source-module-id and no upgrade available", async () => {
    const org = await noCodeOrg();
    const { workspace } = await createNoCodeWorkspace(org.noCodeModuleId, org.ownerToken);
    expect((await tfe("DELETE", `no-code-modules/${org.noCodeModuleId}`, { token: org.ownerToken })).status).toBe(204);
    const read = await tfe("GET", `workspaces/${workspace.id}`, { token: org.ownerToken });
    expect(read.status).toBe(200);
    expect(read.json.data.attributes["source-module-id"]).toBe(workspace.attributes["source-module-id"]);
    expect(read.json.data.attributes["no-code-upgrade-available"]).toBe(false);
  });
});

describe("GET /no-code-modules/:id/versions/:version/module-variables (N9)", () => {
  it("lists the version's input variables with the module's options", async () => {
    const org = await noCodeOrg({ options: [optionEntry("length", ["2", "3"], "number")] });
    const res = await tfe("GET", `no-code-modules/${org.noCodeModuleId}/versions/1.0.0/module-variables`, {
      token: org.ownerToken,
    });
    expect(res.status).toBe(200);
    const byName = Object.fromEntries(
      res.json.data.map((v: { attributes: { name: string } }) => [v.attributes.name, v]),
    );
    expect(Object.keys(byName).sort()).toEqual(["greeting", "length", "prefix"]);
    expect(byName.prefix).toMatchObject({
      type: "registry-module-variables",
      attributes: {
        name: "prefix",
        type: "string",
        description: "Prefix of the pet name",
        required: true,
        sensitive: false,
        default: null,
        options: [],
        "has-global": false,
      },
    });
    expect(byName.length.attributes).toMatchObject({ required: false, default: 2, options: ["2", "3"] });
    expect(byName.greeting.attributes).toMatchObject({ sensitive: true, default: "hello" });
  });

  it("an unknown version is 404; a pending one 422; a non-member 404", async () => {
    const org = await noCodeOrg();
    expect(
      (
        await tfe("GET", `no-code-modules/${org.noCodeModuleId}/versions/9.9.9/module-variables`, {
          token: org.ownerToken,
        })
      ).status,
    ).toBe(404);
    await tfe(
      "POST",
      `organizations/${org.org}/registry-modules/private/${org.org}/${org.registryModule.name}/${org.registryModule.provider}/versions`,
      {
        token: org.ownerToken,
        body: { data: { type: "registry-module-versions", attributes: { version: "2.0.0" } } },
      },
    );
    const pending = await tfe("GET", `no-code-modules/${org.noCodeModuleId}/versions/2.0.0/module-variables`, {
      token: org.ownerToken,
    });
    expect(pending.status).toBe(422);
    expect(pending.json.errors[0].detail).toContain("has not been ingested");
    expect(
      (
        await tfe("GET", `no-code-modules/${org.noCodeModuleId}/versions/1.0.0/module-variables`, {
          token: (await createUser()).token,
        })
      ).status,
    ).toBe(404);
  });
});

describe("registry modules and no-code modules (N9, HCP Terraform's no-code provisioning API)", () => {
  it("a module created with no-code: true is listed with no-code true and exactly one no-code-modules member, sideloaded", async () => {
    const mod = await createRegistryModule(ctx.org, ctx.ownerToken, { noCode: true });
    const plain = await createRegistryModule(ctx.org, ctx.ownerToken);
    const list = await tfe("GET", `organizations/${ctx.org}/registry-modules?include=no-code-modules&page[size]=100`, {
      token: ctx.ownerToken,
    });
    expect(list.status).toBe(200);
    const entry = list.json.data.find((m: { id: string }) => m.id === mod.id);
    expect(entry.attributes["no-code"]).toBe(true);
    expect(entry.relationships["no-code-modules"].data).toHaveLength(1);
    const ref = entry.relationships["no-code-modules"].data[0];
    expect(ref.id).toMatch(/^nocode-/);
    const included = list.json.included.find((r: { id: string }) => r.id === ref.id);
    // The legacy flag creates an enabled module pinned to the latest ok version (none yet: null, N3).
    expect(included).toMatchObject({ type: "no-code-modules", attributes: { enabled: true, "version-pin": null } });
    expect(included.relationships["registry-module"].data.id).toBe(mod.id);
    expect(list.json.data.find((m: { id: string }) => m.id === plain.id).relationships["no-code-modules"].data).toEqual(
      [],
    );
  });

  it("E1 and E2 keep the registry module's `no-code` in step with `enabled`", async () => {
    const mod = await createRegistryModule(ctx.org, ctx.ownerToken);
    const created = await enableNoCode(ctx.org, ctx.ownerToken, noCodeModuleDoc(mod.id, { enabled: true }));
    const flag = async () =>
      (await tfe("GET", `registry-modules/${mod.id}`, { token: ctx.ownerToken })).json.data.attributes["no-code"];
    expect(await flag()).toBe(true);
    await tfe("PATCH", `no-code-modules/${created.json.data.id}`, {
      token: ctx.ownerToken,
      body: { data: { type: "no-code-modules", attributes: { enabled: false } } },
    });
    expect(await flag()).toBe(false);
  });

  it("deleting the registry module deletes its no-code module", async () => {
    const name = uniqueName("mod");
    const mod = await createRegistryModule(ctx.org, ctx.ownerToken, { name });
    await publishVersion(ctx.org, mod, "1.0.0", ctx.ownerToken);
    const created = await enableNoCode(ctx.org, ctx.ownerToken, noCodeModuleDoc(mod.id, { enabled: true }));
    const del = await tfe(
      "DELETE",
      `organizations/${ctx.org}/registry-modules/private/${ctx.org}/${name}/${mod.provider}`,
      { token: ctx.ownerToken },
    );
    expect(del.status).toBe(204);
    expect((await tfe("GET", `no-code-modules/${created.json.data.id}`, { token: ctx.ownerToken })).status).toBe(404);
  });
});
